import { randomUUID } from 'node:crypto';
import type { TeamRole } from '@affiliate/contracts';
import type { RunningGateway } from '../src/gateway';
import { newMemberId, teamMemberModel } from '../src/team/team-members';
import { TEAM_SESSION_COOKIE, TeamSessions } from '../src/team/team-sessions';

export type MemberSession = {
  /** The Cookie header's value: `affiliate_console_session=<id>.<secret>`. */
  cookie: string;
  csrfToken: string;
  sessionId: string;
  memberId: string;
  email: string;
  /** What the console's page adds to a write: the session's CSRF token, and the gateway's own Origin. */
  writeHeaders: (gatewayOrigin: string) => Record<string, string>;
};

/**
 * A member of the program with this role, signed in: stored as the team's accounts store one (the
 * invite and sign-in routes that make them are the team's own tests'), its session made by the same
 * TeamSessions the gateway reads. These tests are about what a session may do once it exists.
 */
export async function memberSession(gateway: RunningGateway, programId: string, role: TeamRole): Promise<MemberSession> {
  const email = `${role.toLowerCase()}-${randomUUID().slice(0, 8)}@example.com`;
  const member = { _id: newMemberId(), programId, email, role };
  await teamMemberModel(gateway.connection).create({ ...member, passwordHash: 'not used: the session is made directly' });
  const { session, cookie } = await new TeamSessions(gateway.connection).create(member);
  return {
    cookie: `${TEAM_SESSION_COOKIE}=${cookie}`,
    csrfToken: session.csrfToken,
    sessionId: session.sessionId,
    memberId: member._id,
    email,
    writeHeaders: (gatewayOrigin) => ({ origin: gatewayOrigin, 'x-csrf-token': session.csrfToken }),
  };
}

/** The member's sessions end as a sign-out or removal ends them. */
export async function signOut(gateway: RunningGateway, programId: string, member: MemberSession): Promise<void> {
  await new TeamSessions(gateway.connection).revoke(programId, member.sessionId);
}

/** The member is gone from the team (its sessions are not revoked here: the gateway must refuse them by the member alone). */
export async function removeMember(gateway: RunningGateway, programId: string, member: MemberSession): Promise<void> {
  await teamMemberModel(gateway.connection).deleteOne({ _id: member.memberId, programId });
}
