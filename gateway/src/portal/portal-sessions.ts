import { randomUUID } from 'node:crypto';
import { PORTAL_LINK_TTL_SECONDS, PORTAL_SESSION_TTL_SECONDS } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';
import { byCredential, hashOf, newSecret } from '../browser/session-credentials';

/**
 * Affiliate portal sessions (issue 30, DESIGN.md §11), like Stripe's customer portal sessions: the
 * program's key creates one and gets a single-use link; opening the link turns it into a session
 * cookie of that one affiliate of that one program. Only hashes of the link token and of the cookie
 * are stored. Both credentials are `<session id>.<secret>`, so each is checked by a point read on
 * `_id` and a constant-time comparison of hashes, with no secondary index to keep (DESIGN.md §8).
 */
/** Who made a portal session: an API key of the program, or one of its team members. */
export type PortalSessionCreator = { apiKeyId: string; apiKeyPrefix: string } | { memberId: string; email: string };

export type PortalSessionDocument = {
  _id: string;
  programId: string;
  affiliateId: string;
  linkHash: string;
  linkExpiresAt: Date;
  returnUrl: string | null;
  /**
   * The API key, or the team member in a console session ("view as affiliate"), that made the session:
   * the program's audit record names it with the session for what the affiliate changes (absent on
   * sessions made before it was kept).
   */
  createdBy?: PortalSessionCreator;
  /** Set once, by the one request that opened the link: a second opening finds it set. */
  openedAt: Date | null;
  cookieHash: string | null;
  /** The session's CSRF token, which the portal's page reads and sends back on every write. */
  csrfToken: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
};

const schema = new Schema<PortalSessionDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    linkHash: { type: String, required: true },
    linkExpiresAt: { type: Date, required: true },
    returnUrl: { type: String, default: null },
    createdBy: { type: { apiKeyId: String, apiKeyPrefix: String, memberId: String, email: String, _id: false }, default: undefined },
    openedAt: { type: Date, default: null },
    cookieHash: { type: String, default: null },
    csrfToken: { type: String, default: null },
    expiresAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
  },
  { collection: 'affiliate_portal_sessions', timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
// Revoking every session of an affiliate reads by these (a rare act; a scan on the local server).
schema.index({ programId: 1, affiliateId: 1 });
// On MongoDB the sessions go a day after they were made: the link lives 10 minutes and the session 12 hours.
schema.index({ createdAt: 1 }, { expireAfterSeconds: 24 * 60 * 60 });

const portalSessionModel = (connection: Connection): Model<PortalSessionDocument> =>
  (connection.models.AffiliatePortalSession as Model<PortalSessionDocument> | undefined) ??
  connection.model<PortalSessionDocument>('AffiliatePortalSession', schema);

/** Why a link does not open: each has its own page. */
export type LinkRefusal = 'unknown' | 'expired' | 'used' | 'revoked';

export type OpenedSession = { session: PortalSessionDocument; cookie: string };

/** A live session, as every portal request sees it: the affiliate and program come from here only. */
export type LiveSession = Pick<PortalSessionDocument, '_id' | 'programId' | 'affiliateId' | 'returnUrl' | 'expiresAt' | 'createdBy'> & {
  csrfToken: string;
};

export class PortalSessions {
  private readonly model: Model<PortalSessionDocument>;

  /** `linkTtlSeconds`: how long a link can be opened (10 minutes; tests shorten it). */
  constructor(
    connection: Connection,
    private readonly linkTtlSeconds: number = PORTAL_LINK_TTL_SECONDS,
  ) {
    this.model = portalSessionModel(connection);
  }

  async create(
    programId: string,
    affiliateId: string,
    returnUrl: string | null,
    createdBy: PortalSessionCreator,
  ): Promise<{ session: PortalSessionDocument; linkToken: string }> {
    const id = randomUUID();
    const secret = newSecret();
    const created = await this.model.create({
      _id: id,
      programId,
      affiliateId,
      linkHash: hashOf(secret),
      linkExpiresAt: new Date(Date.now() + this.linkTtlSeconds * 1000),
      returnUrl,
      createdBy,
    });
    return { session: created.toObject(), linkToken: `${id}.${secret}` };
  }

  /**
   * The session a link token names, while it can still be opened (the program is read from it, as an
   * API key's is from the key: the token is the credential).
   */
  async openable(linkToken: string): Promise<PortalSessionDocument | LinkRefusal> {
    const session = await this.byCredential(linkToken, 'linkHash');
    if (!session) return 'unknown';
    if (session.revokedAt) return 'revoked';
    if (session.openedAt) return 'used';
    if (session.linkExpiresAt.getTime() <= Date.now()) return 'expired';
    return session;
  }

  /**
   * Opens the link: one conditional write, which only the first of any number of concurrent openings
   * wins (a guarantee the platform tests: a conditional update applies exactly as often as its
   * condition allows). The loser is told the link was used.
   */
  async open(programId: string, session: PortalSessionDocument): Promise<OpenedSession | 'used'> {
    const secret = newSecret();
    const now = new Date();
    const changes = {
      openedAt: now,
      cookieHash: hashOf(secret),
      csrfToken: newSecret(),
      expiresAt: new Date(now.getTime() + PORTAL_SESSION_TTL_SECONDS * 1000),
    };
    const opened = await this.model.updateOne(
      { _id: session._id, programId, openedAt: null, revokedAt: null, linkExpiresAt: { $gt: now } },
      { $set: changes },
    );
    if (opened.modifiedCount !== 1) return 'used';
    return { session: { ...session, ...changes }, cookie: `${session._id}.${secret}` };
  }

  /** The live session a cookie names, or null (unknown, revoked, expired or never opened). */
  async live(cookie: string): Promise<LiveSession | null> {
    const session = await this.byCredential(cookie, 'cookieHash');
    if (!session || session.revokedAt || !session.expiresAt || session.expiresAt.getTime() <= Date.now() || !session.csrfToken) return null;
    const { _id, programId, affiliateId, returnUrl, expiresAt, csrfToken, createdBy } = session;
    return { _id, programId, affiliateId, returnUrl, expiresAt, csrfToken, createdBy };
  }

  /** Revokes one session of the program; how many were live (0 for one already revoked, expired or of another program). */
  async revoke(programId: string, sessionId: string): Promise<number> {
    const revoked = await this.model.updateOne({ _id: sessionId, programId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    return revoked.modifiedCount;
  }

  /** Revokes every session of one affiliate of the program. */
  async revokeAllOf(programId: string, affiliateId: string): Promise<number> {
    const revoked = await this.model.updateMany({ programId, affiliateId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    return revoked.modifiedCount;
  }

  private byCredential(credential: string, field: 'linkHash' | 'cookieHash'): Promise<PortalSessionDocument | null> {
    return byCredential(this.model, credential, field);
  }
}
