import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { adminAuth, createProgramWithKey, memberPassword, startGateway } from './support';

/**
 * The team's collections get their indexes at start like every other (the gateway registers their
 * models before it builds indexes): the members' unique email is what keeps one address one member
 * when two programs invited it before it joined either.
 */
let gateway: RunningGateway;

beforeAll(async () => {
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.stop();
});

const tokenOf = (inviteUrl: string) => new URL(inviteUrl.replace('#/', '')).searchParams.get('token') as string;

test('an email is one member across the gateway: the second of two programs\u2019 invites to it is refused when accepted', async () => {
  const email = `twice-${randomUUID().slice(0, 8)}@example.com`;
  const tokens: string[] = [];
  for (const program of [await createProgramWithKey(gateway), await createProgramWithKey(gateway)]) {
    const invited = await request(gateway.url)
      .post(`/admin/v1/programs/${program.programId}/members`)
      .set(adminAuth)
      .send({ email, role: 'OWNER' })
      .expect(200);
    tokens.push(tokenOf(invited.body.inviteUrl));
  }
  await request(gateway.url).post('/api/v1/team/invites/accept').send({ token: tokens[0], password: memberPassword() }).expect(200);
  const second = await request(gateway.url).post('/api/v1/team/invites/accept').send({ token: tokens[1], password: memberPassword() });
  expect({ status: second.status, code: second.body.code }).toEqual({ status: 409, code: 'member_exists' });
});
