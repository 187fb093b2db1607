import { createHash } from 'node:crypto';
import {
  AcceptInviteBody,
  API_OPERATIONS,
  ChangeMemberRoleBody,
  CreateApiKeyBody,
  InviteMemberBody,
  NoQuery,
  RemoveMemberBody,
  RevokeApiKeyBody,
  roleAllows,
  scopesOf,
  SignInBody,
  TotpCodeBody,
  type ProgramAuditAction,
  type TeamRole,
  type TeamSession,
} from '@affiliate/contracts';
import {
  AppError,
  createRouter,
  forbidden,
  notFound,
  parseBody,
  parseQuery,
  requireJsonBody,
  unauthorized,
  withRequestContext,
  type Logger,
} from '@affiliate/platform';
import express, { type RequestHandler, type Response, type Router } from 'express';
import { createApiKey, listApiKeys, type AdminStore } from '../admin/api-keys';
import { recordWhenAnswered } from '../admin/program-audit-log';
import type { ProgramDocument } from '../admin/program-model';
import { findLiveProgram } from '../admin/programs';
import type { RateLimit } from '../config';
import { cookieNamed, originOf, requireSameOriginWrite } from '../browser/same-origin-writes';
import type { RateLimits } from '../rate-limit/rate-limiter';
import { toTeamMember, type TeamAccounts } from './team-accounts';
import type { TeamMemberDocument } from './team-members';
import { TEAM_SESSION_COOKIE, type LiveTeamSession, type TeamSessions } from './team-sessions';

/** Failed sign-ins allowed in a window, per account (email) and per client address, before every attempt is refused 429. */
export type TeamLoginLimits = { account: RateLimit; address: RateLimit };
export const DEFAULT_TEAM_LOGIN_LIMITS: TeamLoginLimits = {
  account: { points: 10, duration: 900 },
  address: { points: 50, duration: 900 },
};

export type TeamRoutesOptions = {
  accounts: TeamAccounts;
  sessions: TeamSessions;
  store: AdminStore;
  rateLimits: RateLimits;
  loginLimits: TeamLoginLimits;
  /** Per client address, as every route without an API key. */
  anonymous: RequestHandler;
  /** Drop cached key verdicts on this replica (a revoked key stops at once here, within seconds elsewhere). */
  onChange: () => void;
  logger: Logger;
};

/** The paths of the console's own routes under /api/v1: these take a member's session, never an API key. */
export const TEAM_PATHS = ['/team', '/api-keys'];

/** The console's page that accepts an invite; the token rides in the fragment, which no server, proxy or log ever sees. */
export const inviteUrlOf = (gatewayUrl: string, token: string) => `${gatewayUrl}/console/#/accept-invite?token=${token}`;

const apiAccessDisabled = () => forbidden('API access is not enabled for this program', 'api_access_disabled');

type Team = { session: LiveTeamSession; program: ProgramDocument };
const teamOf = (response: Response): Team => response.locals.team as Team;

/** What the role may do: every public operation roleAllows, and the team operations (OWNER's to change the team and keys). */
export function allowedOperationsOf(role: TeamRole): string[] {
  return API_OPERATIONS.filter((operation) => !operation.admin && !operation.browser)
    .filter((operation) =>
      operation.team
        ? operation.team !== 'owner' || role === 'OWNER'
        : roleAllows(role, { operationId: operation.operationId, scopes: scopesOf(operation) }),
    )
    .map((operation) => operation.operationId);
}

const sessionAnswer = (
  session: Pick<LiveTeamSession, 'csrfToken' | 'idleExpiresAt' | 'expiresAt'>,
  member: TeamMemberDocument,
  program: ProgramDocument,
): TeamSession => ({
  member: toTeamMember(member),
  program: { id: program._id, name: program.name },
  csrfToken: session.csrfToken,
  allowedOperations: allowedOperationsOf(member.role),
  idleExpiresAt: session.idleExpiresAt.toISOString(),
  expiresAt: session.expiresAt.toISOString(),
});

/**
 * The team's routes (issue 32, DESIGN.md §11): sign-in and sessions, invites, members, TOTP and the
 * program's secret API keys, answered by the gateway from its own database. They take a member's
 * session cookie, never an API key; the program, the member and the role come from the session
 * alone. Mounted before the /api/v1 proxy, for /team/* and /api-keys only: every other path passes on.
 */
export function teamRoutes(options: TeamRoutesOptions): Router {
  const router = createRouter();
  const { accounts, sessions } = options;
  const readJson = express.json({ limit: '16kb' });
  const json: RequestHandler = (request, response, next) =>
    requireJsonBody(request, response, (error?: unknown) => (error ? next(error) : readJson(request, response, next)));

  /** No-store on every answer (a session, a key, an invite link); an API key is refused before anything is read. */
  const noKey: RequestHandler = (request, response, next) => {
    response.setHeader('Cache-Control', 'no-store');
    if (request.header('authorization') !== undefined)
      throw forbidden(
        `${request.method} /api/v1${request.path} takes a team member's console session, never an API key: sign in to the console (POST /api/v1/team/session)`,
        'team_session_required',
      );
    next();
  };
  router.use(TEAM_PATHS, options.anonymous, noKey);

  const withSession: RequestHandler = async (_request, response, next) => {
    const cookie = cookieNamed(_request, TEAM_SESSION_COOKIE);
    const session = cookie ? await sessions.live(cookie) : null;
    const program = session ? await findLiveProgram(options.store.programs, session.programId) : null;
    if (!session || !program)
      throw unauthorized('No console session: sign in (a session ends after a while without activity, and on sign-out)', 'unauthenticated');
    // As on the rest of /api/v1 (authenticate.ts): the operator turned the program off, the whole console with it.
    if (!program.apiAccess) throw apiAccessDisabled();
    response.locals.team = { session, program } satisfies Team;
    withRequestContext({ requestId: String(response.locals.requestId), programId: program._id }, () => next());
  };

  /**
   * CSRF on every write, as the portal's (same-origin-writes.ts); SameSite=Strict on the cookie is the
   * third wall. It runs after `audited`, so that a refused forgery is in the audit record, as on the rest of /api/v1.
   */
  const csrf: RequestHandler = (request, response, next) => {
    requireSameOriginWrite(request, teamOf(response).session.csrfToken, 'console');
    next();
  };

  /** Members and keys are the OWNER's (issue 32's role table). */
  const ownerOnly: RequestHandler = (request, response, next) => {
    const { role } = teamOf(response).session;
    if (role !== 'OWNER')
      throw forbidden(
        `Your role ${role} cannot ${request.method} /api/v1${request.path}: only an OWNER manages members and keys`,
        'role_forbidden',
      );
    next();
  };

  /**
   * The act goes into the program's audit record once answered, refusals of the role included, with
   * the member who did it: the audit record is where an OWNER finds who changed the team and the keys.
   */
  const audited =
    (action: ProgramAuditAction): RequestHandler =>
    (request, response, next) => {
      const { session } = teamOf(response);
      const act = {
        actor: { memberId: session.memberId, email: session.email },
        action,
        operation: `${request.method} /api/v1${request.path}`,
      };
      recordWhenAnswered(options.store.programAudit, options.logger, session.programId, act, response);
      next();
    };

  const member = [withSession];
  // Every write of a session is recorded, whatever its answer (CSRF and role refusals included): its own action, else member.change.
  const write = (action: ProgramAuditAction = 'member.change') => [withSession, audited(action), csrf];
  const owner = (action: ProgramAuditAction) => [...write(action), ownerOnly];

  const signedIn = async (response: Response, member: TeamMemberDocument, program: ProgramDocument) => {
    const { session, cookie } = await sessions.create(member);
    response.cookie(TEAM_SESSION_COOKIE, cookie, {
      httpOnly: true,
      secure: true,
      sameSite: 'strict',
      path: '/',
      expires: session.expiresAt,
    });
    response.json(sessionAnswer(session, member, program));
  };

  // Sign-in: throttled per account and per address; each attempt is counted before the password is even hashed.
  const loginKey = (kind: 'account' | 'address', value: string) =>
    createHash('sha256').update(`team-login\n${kind}\n${value}`).digest('base64url');
  const throttled = (response: Response, resetSeconds: number) => {
    response.setHeader('Retry-After', String(resetSeconds));
    return new AppError(429, `Too many failed sign-ins for this account or from this address; retry after ${resetSeconds} s`, {
      code: 'login_throttled',
    });
  };
  router.post('/team/session', json, async (request, response) => {
    const body = request.body as { email?: unknown } | undefined;
    const email = typeof body?.email === 'string' ? body.email.trim().toLowerCase() : '';
    const keys = [
      { key: loginKey('account', email), limit: options.loginLimits.account },
      { key: loginKey('address', request.ip ?? 'unknown'), limit: options.loginLimits.address },
    ];
    // Counted first, then checked: however many attempts arrive at once, at most the limit of passwords
    // are checked per account and per address in a window (a check made before and a count made after
    // would let a burst through). Once used up, every attempt waits for the window to end, the right
    // password's too; a right one gives its points back, so the limit is in effect one of failures.
    const counted = await Promise.all(keys.map(({ key, limit }) => options.rateLimits.consume(key, limit)));
    const over = counted.filter((state) => !state.allowed);
    if (over.length > 0) throw throttled(response, Math.max(...over.map((state) => state.resetSeconds)));
    // A body that is not an email and a password is a wrong email or password: the sign-in form says nothing more.
    const parsed = SignInBody.safeParse(body ?? {});
    const outcome = parsed.success
      ? await accounts.signIn(parsed.data.email, parsed.data.password, parsed.data.totpCode)
      : ('credentials_invalid' as const);
    if (typeof outcome === 'string') {
      const messages = {
        credentials_invalid: 'Wrong email or password',
        totp_required: 'Enter the code of your authenticator app (totpCode)',
        totp_invalid: "Wrong code: enter your authenticator app's current code",
      };
      throw unauthorized(messages[outcome], outcome);
    }
    await Promise.all(keys.map(({ key, limit }) => options.rateLimits.refund(key, limit)));
    const program = await findLiveProgram(options.store.programs, outcome.programId);
    if (!program) throw unauthorized('Wrong email or password', 'credentials_invalid');
    // Said only to whoever knows the password: the operator turned the program off.
    if (!program.apiAccess) throw apiAccessDisabled();
    await signedIn(response, outcome, program);
  });

  router.get('/team/session', ...member, async (request, response) => {
    parseQuery(NoQuery, request);
    const { session, program } = teamOf(response);
    response.json(sessionAnswer(session, await accounts.member(program._id, session.memberId), program));
  });

  router.delete('/team/session', ...write(), async (_request, response) => {
    const { session } = teamOf(response);
    await sessions.revoke(session.programId, session.sessionId);
    response.clearCookie(TEAM_SESSION_COOKIE, { httpOnly: true, secure: true, sameSite: 'strict', path: '/' });
    response.json({ signedOut: true });
  });

  // The token is the credential: checked before the body is judged, so a request without one is a 401 like any without a credential.
  router.post('/team/invites/accept', json, async (request, response) => {
    const token = (request.body as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string')
      throw unauthorized('This invite link is not valid: ask an OWNER of the program for a new one', 'invite_invalid');
    const invite = await accounts.acceptable(token);
    const { password } = parseBody(AcceptInviteBody, request);
    const program = await findLiveProgram(options.store.programs, invite.programId);
    if (!program) throw notFound('The program of this invite no longer exists', 'resource_missing');
    // Before the invite is spent: it still works once the operator turns the program back on.
    if (!program.apiAccess) throw apiAccessDisabled();
    const joined = await accounts.accept(invite, password);
    // The new member is in the program's audit record, as who joined, under the invite's role.
    const act = {
      actor: { memberId: joined._id, email: joined.email },
      action: 'team.member_joined' as const,
      operation: `${request.method} /api/v1${request.path}`,
    };
    recordWhenAnswered(options.store.programAudit, options.logger, program._id, act, response);
    await signedIn(response, joined, program);
  });

  router.get('/team/members', ...member, async (request, response) => {
    parseQuery(NoQuery, request);
    response.json(await accounts.list(teamOf(response).session.programId));
  });
  router.post('/team/members', ...owner('team.member_invited'), json, async (request, response) => {
    const body = parseBody(InviteMemberBody, request);
    const { session } = teamOf(response);
    const { invite, token } = await accounts.invite(session.programId, body, { memberId: session.memberId, email: session.email });
    response.json({ invite, inviteUrl: inviteUrlOf(originOf(request), token) });
  });
  router.put('/team/members', ...owner('team.role_changed'), json, async (request, response) => {
    const body = parseBody(ChangeMemberRoleBody, request);
    const { member: changed } = await accounts.changeRole(teamOf(response).session.programId, body.id, body.role);
    response.json(changed);
  });
  router.delete('/team/members', ...owner('team.member_removed'), json, async (request, response) => {
    const { id } = parseBody(RemoveMemberBody, request);
    await accounts.remove(teamOf(response).session.programId, id);
    response.json({ id, deleted: true });
  });

  router.post('/team/totp', ...write('team.totp_changed'), async (_request, response) => {
    const { session } = teamOf(response);
    response.json(await accounts.startTotp(session.programId, session.memberId));
  });
  router.put('/team/totp', ...write('team.totp_changed'), json, async (request, response) => {
    const { code } = parseBody(TotpCodeBody, request);
    const { session } = teamOf(response);
    await accounts.confirmTotp(session.programId, session.memberId, code);
    response.json({ totpEnabled: true });
  });
  router.delete('/team/totp', ...write('team.totp_changed'), json, async (request, response) => {
    const { code } = parseBody(TotpCodeBody, request);
    const { session } = teamOf(response);
    await accounts.disableTotp(session.programId, session.memberId, code);
    response.json({ totpEnabled: false });
  });

  router.get('/api-keys', withSession, ownerOnly, async (request, response) => {
    parseQuery(NoQuery, request);
    response.json(await listApiKeys(options.store, teamOf(response).session.programId));
  });
  router.post('/api-keys', ...owner('api_key.created'), json, async (request, response) => {
    const { scopes } = parseBody(CreateApiKeyBody, request);
    response.json(await createApiKey(options.store, teamOf(response).session.programId, { scopes }));
  });
  router.delete('/api-keys', ...owner('api_key.revoked'), json, async (request, response) => {
    const { id } = parseBody(RevokeApiKeyBody, request);
    const programId = teamOf(response).session.programId;
    // Only a key of this program: another program's key id is a 404, as one that never existed.
    const revoked = await options.store.apiKeys.updateOne({ _id: id, programId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    if (revoked.matchedCount === 0 && !(await options.store.apiKeys.exists({ _id: id, programId })))
      throw notFound(`No API key with id ${id} in this program`, 'resource_missing');
    options.onChange();
    response.json({ id, revoked: true });
  });
  return router;
}
