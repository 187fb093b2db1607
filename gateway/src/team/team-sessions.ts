import { randomUUID } from 'node:crypto';
import type { TeamRole } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';
import { byCredential, hashOf, newSecret, teamMemberModel, type TeamMemberDocument, type TeamMemberModel } from './team-members';

/**
 * The console's session cookie: the whole API reads it (team-enforcement), so its path is `/`. The
 * `__Host-` prefix makes browsers take it only when Secure, Path=/ and without Domain, so a sibling
 * subdomain cannot plant or shadow it (Chromium accepts it over http://127.0.0.1 too, as the console's tests show).
 */
export const TEAM_SESSION_COOKIE = '__Host-affiliate_console_session';

/** Defaults of TEAM_SESSION_IDLE_MINUTES and TEAM_SESSION_HOURS (OWASP's session guidance for a back office). */
export const DEFAULT_TEAM_SESSION_IDLE_MS = 30 * 60_000;
export const DEFAULT_TEAM_SESSION_MS = 12 * 3_600_000;

/**
 * A member's console session, stored like the portal's (gateway/src/portal/portal-sessions.ts): the
 * cookie is `<session id>.<secret>`, only a sha256 of the secret is kept, so each request is one point
 * read on `_id` and a constant-time comparison.
 */
export type TeamSessionDocument = {
  _id: string;
  programId: string;
  memberId: string;
  cookieHash: string;
  /** Synchronizer token: the page reads it from GET /api/v1/team/session and sends it on every write. */
  csrfToken: string;
  /** Slides forward on every request, never past `expiresAt`. */
  idleExpiresAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
};

const schema = new Schema<TeamSessionDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    memberId: { type: String, required: true },
    cookieHash: { type: String, required: true },
    csrfToken: { type: String, required: true },
    idleExpiresAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    revokedAt: { type: Date, default: null },
  },
  { collection: 'team_sessions', timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
// Revoking every session of a member (a role change, a removal) reads by these.
schema.index({ programId: 1, memberId: 1 });
// On MongoDB a session goes a day after its absolute expiry; the local server keeps it, refused all the same.
schema.index({ expiresAt: 1 }, { expireAfterSeconds: 24 * 60 * 60 });

const teamSessionModel = (connection: Connection): Model<TeamSessionDocument> =>
  (connection.models.TeamSession as Model<TeamSessionDocument> | undefined) ?? connection.model<TeamSessionDocument>('TeamSession', schema);

/** A live session as every request sees it: the program, member and role come from here only, never from the request. */
export type LiveTeamSession = {
  sessionId: string;
  programId: string;
  memberId: string;
  email: string;
  role: TeamRole;
  csrfToken: string;
  idleExpiresAt: Date;
  expiresAt: Date;
};

export type TeamSessionLifetimes = { idleMs: number; absoluteMs: number };

export class TeamSessions {
  private readonly model: Model<TeamSessionDocument>;
  private readonly members: TeamMemberModel;

  constructor(
    connection: Connection,
    private readonly lifetimes: TeamSessionLifetimes = { idleMs: DEFAULT_TEAM_SESSION_IDLE_MS, absoluteMs: DEFAULT_TEAM_SESSION_MS },
  ) {
    this.model = teamSessionModel(connection);
    this.members = teamMemberModel(connection);
  }

  /** A new session of the member; the cookie value is returned once and never stored. */
  async create(
    member: Pick<TeamMemberDocument, '_id' | 'programId' | 'email' | 'role'>,
  ): Promise<{ session: LiveTeamSession; cookie: string }> {
    const id = randomUUID();
    const secret = newSecret();
    const now = Date.now();
    const expiresAt = new Date(now + this.lifetimes.absoluteMs);
    const idleExpiresAt = new Date(Math.min(now + this.lifetimes.idleMs, expiresAt.getTime()));
    const csrfToken = newSecret();
    await this.model.create({
      _id: id,
      programId: member.programId,
      memberId: member._id,
      cookieHash: hashOf(secret),
      csrfToken,
      idleExpiresAt,
      expiresAt,
    });
    return {
      session: {
        sessionId: id,
        programId: member.programId,
        memberId: member._id,
        email: member.email,
        role: member.role,
        csrfToken,
        idleExpiresAt,
        expiresAt,
      },
      cookie: `${id}.${secret}`,
    };
  }

  /**
   * The live session a cookie names, or null (unknown, revoked, idle or past its end, or its member
   * removed). A live session's idle expiry slides forward: a conditional write, which a concurrent
   * revocation wins (the request then still passes once; the next one is refused).
   */
  async live(cookieValue: string): Promise<LiveTeamSession | null> {
    const session = await byCredential(this.model, cookieValue, 'cookieHash');
    const now = Date.now();
    if (!session || session.revokedAt || session.idleExpiresAt.getTime() <= now || session.expiresAt.getTime() <= now) return null;
    // Point reads on _id only (DESIGN.md §8): the program is checked on the document returned.
    const member = await this.members.findOne({ _id: session.memberId }).lean<TeamMemberDocument>();
    if (!member || member.programId !== session.programId) return null;
    // A burst of requests (a page loading) moves the idle end once: a write only when it would move by
    // more than a tenth of the idle time (a minute at most), so a session may end that much early, never late.
    const moved = new Date(Math.min(now + this.lifetimes.idleMs, session.expiresAt.getTime()));
    const worthWriting = moved.getTime() - session.idleExpiresAt.getTime() > Math.min(60_000, this.lifetimes.idleMs / 10);
    // By _id alone: setting the idle end never undoes a revocation that came meanwhile.
    if (worthWriting) await this.model.updateOne({ _id: session._id }, { $set: { idleExpiresAt: moved } });
    const idleExpiresAt = worthWriting ? moved : session.idleExpiresAt;
    return {
      sessionId: session._id,
      programId: session.programId,
      memberId: member._id,
      email: member.email,
      role: member.role,
      csrfToken: session.csrfToken,
      idleExpiresAt,
      expiresAt: session.expiresAt,
    };
  }

  /** The program of the session a cookie names, live or ended: why an ended one ended (its program deleted) is then told apart. */
  async programOf(cookieValue: string): Promise<string | null> {
    return (await byCredential(this.model, cookieValue, 'cookieHash'))?.programId ?? null;
  }

  /** Revokes one session of the program (sign-out); how many were live. */
  async revoke(programId: string, sessionId: string): Promise<number> {
    const revoked = await this.model.updateOne({ _id: sessionId, programId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    return revoked.modifiedCount;
  }

  /** Revokes every session of the program's members: the program was deleted. */
  async revokeProgram(programId: string): Promise<number> {
    const revoked = await this.model.updateMany({ programId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    return revoked.modifiedCount;
  }

  /** Revokes every session of one member of the program: on a role change and on removal. */
  async revokeAllOf(programId: string, memberId: string): Promise<number> {
    const revoked = await this.model.updateMany({ programId, memberId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    return revoked.modifiedCount;
  }
}
