import { randomUUID } from 'node:crypto';
import type { TeamRole } from '@affiliate/contracts';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { adminAuth } from './support';

export type MemberSession = {
  /** The Cookie header's value: `affiliate_console_session=<id>.<secret>`. */
  cookie: string;
  csrfToken: string;
  memberId: string;
  email: string;
  /** What the console's page adds to a write: the session's CSRF token, and the gateway's own Origin. */
  writeHeaders: (gatewayOrigin: string) => Record<string, string>;
};

/**
 * A member of the program with this role, signed in, made as a person would be: the operator's
 * invite (POST /admin/v1/programs/{id}/members), then the invite link accepted with a password,
 * which answers the session and its cookie.
 */
export async function memberSession(gateway: RunningGateway, programId: string, role: TeamRole): Promise<MemberSession> {
  const email = `${role.toLowerCase()}-${randomUUID().slice(0, 8)}@example.com`;
  const invited = await request(gateway.url).post(`/admin/v1/programs/${programId}/members`).set(adminAuth).send({ email, role }).expect(200);
  const token = new URLSearchParams(new URL(String(invited.body.inviteUrl)).hash.split('?')[1] ?? '').get('token');
  const accepted = await request(gateway.url)
    .post('/api/v1/team/invites/accept')
    .set('origin', gateway.url)
    .send({ token, password: `pass-${randomUUID()}` })
    .expect(200);
  const setCookie = ([] as string[]).concat(accepted.headers['set-cookie'] ?? []);
  const cookie = setCookie.map((line) => line.split(';')[0] ?? '').find((pair) => pair.startsWith('affiliate_console_session='));
  if (!cookie) throw new Error(`accepting the invite set no session cookie: ${JSON.stringify(setCookie)}`);
  const csrfToken = String(accepted.body.csrfToken);
  return {
    cookie,
    csrfToken,
    memberId: String(accepted.body.member.id),
    email,
    writeHeaders: (gatewayOrigin) => ({ origin: gatewayOrigin, 'x-csrf-token': csrfToken }),
  };
}
