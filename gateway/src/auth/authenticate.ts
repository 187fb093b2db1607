import { AppError, forbidden, notFound, unauthorized, withRequestContext } from '@affiliate/platform';
import { TEAM_ROLE_SCOPES, type ErrorCode, type TeamRole } from '@affiliate/contracts';
import type { RequestHandler, Response } from 'express';
import { hashApiKey } from '../admin/api-keys';
import type { FailedAuthentication } from '../rate-limit/middleware';
import { TEAM_SESSION_COOKIE, type TeamSessions } from '../team/team-sessions';
import { cookieNamed } from '../browser/same-origin-writes';
import type { CallerProgram, KeyDirectory, KeyVerdict } from './key-directory';

/** A request made with an API key (secret or publishable): what its key resolved to. */
export type KeyCaller = Omit<Extract<KeyVerdict, { kind: 'valid' }>, 'kind' | 'apiAccess'>;

/**
 * A request made in a team member's console session (issue 32): the program's settings as its keys
 * get them, the scopes of the member's role, and who the member is. The program, member and role come
 * from the session only, never from the request.
 */
export type MemberCaller = Omit<CallerProgram, 'apiAccess'> & {
  credential: 'member';
  scopes: KeyCaller['scopes'];
  sessionId: string;
  memberId: string;
  email: string;
  role: TeamRole;
  csrfToken: string;
};

export type Caller = KeyCaller | MemberCaller;

const BEARER = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i;

/**
 * The spec's Authentication section: 401 missing / not Bearer / unknown or revoked, 404 program gone,
 * 403 no API access. A request without an Authorization header but with a team member's session cookie
 * is the member's (the console's); an Authorization header always wins, so an API key is judged exactly
 * as it would be without the cookie.
 */
export function authenticate(keys: KeyDirectory, failures: FailedAuthentication, teamSessions: TeamSessions): RequestHandler {
  return async (request, response, next) => {
    // RFC 6750: a 401 names the scheme, and the error when a token was presented.
    const refuse = (message: string, challenge: string, code: ErrorCode = 'unauthenticated') => {
      response.setHeader('WWW-Authenticate', challenge);
      return failures.record(request.ip, response, unauthorized(message, code));
    };
    const header = request.header('authorization');
    const sessionCookie = header ? null : cookieNamed(request, TEAM_SESSION_COOKIE);
    if (sessionCookie !== null) return authenticateMember(keys, teamSessions, sessionCookie, response, next);
    if (!header) throw await refuse('Missing Authorization header: send "Authorization: Bearer <API key>"', 'Bearer realm="api"');
    const match = BEARER.exec(header);
    if (!match?.[1])
      throw await refuse('The Authorization header must be "Bearer <API key>"', 'Bearer realm="api", error="invalid_request"');
    // A key known valid here always passes. Any other is checked against its address first: one over
    // its failed attempts gets no database lookup for it (but the window's first).
    const keyHash = hashApiKey(match[1]);
    const throttled = keys.isKnownValid(match[1], keyHash) ? null : await failures.beforeLookup(request.ip, response);
    if (throttled) throw throttled;
    const verdict = await keys.resolve(match[1], keyHash);
    if (verdict.kind === 'unknown')
      throw await refuse(
        'Invalid API key: it is unknown or has been revoked',
        'Bearer realm="api", error="invalid_token"',
        'api_key_invalid',
      );
    if (verdict.kind === 'program-deleted') throw notFound('The program of this API key no longer exists', 'program_missing');
    if (!verdict.apiAccess) throw forbidden('API access is not enabled for this program', 'api_access_disabled');
    const { kind: _valid, apiAccess: _apiAccess, ...caller } = verdict;
    proceedAs(caller, response, next);
  };
}

/**
 * The member of a live console session, in the program the session names. The program's rules are its
 * keys': gone is 404, API access off is 403 (the operator turned the program off, the console with it).
 * An ended session (signed out, idle, past its end, revoked by a role change or removal) is a 401 that
 * does not count against the address's failed authentications: the cookie is 256 random bits, not a
 * guessable key, and a console left open past its session must not lock out the office's API keys.
 */
async function authenticateMember(
  keys: KeyDirectory,
  teamSessions: TeamSessions,
  cookie: string,
  response: Response,
  next: () => void,
): Promise<void> {
  const session = await teamSessions.live(cookie);
  // A deleted program's sessions end with it (its team is released), and are still answered as its keys are: 404.
  const endedWith = session ? null : await teamSessions.programOf(cookie);
  if (endedWith && (await keys.program(endedWith)).kind === 'program-deleted')
    throw notFound('The program of this console session no longer exists', 'program_missing');
  if (!session) {
    response.setHeader('WWW-Authenticate', 'Bearer realm="api"');
    throw unauthorized('Your console session has ended (signed out, expired or revoked): sign in again', 'unauthenticated');
  }
  const program = await keys.program(session.programId);
  if (program.kind === 'program-deleted') throw notFound('The program of this console session no longer exists', 'program_missing');
  if (!program.apiAccess) throw forbidden('API access is not enabled for this program', 'api_access_disabled');
  const { kind: _live, apiAccess: _apiAccess, ...settings } = program;
  proceedAs(
    {
      ...settings,
      credential: 'member',
      scopes: [...TEAM_ROLE_SCOPES[session.role]],
      sessionId: session.sessionId,
      memberId: session.memberId,
      email: session.email,
      role: session.role,
      csrfToken: session.csrfToken,
    },
    response,
    next,
  );
}

function proceedAs(caller: Caller, response: Response, next: () => void): void {
  response.locals.caller = caller;
  const requestId = String(response.locals.requestId);
  withRequestContext({ requestId, programId: caller.programId }, () => next());
}

export function callerOf(response: Response): Caller {
  const caller = response.locals.caller as Caller | undefined;
  if (!caller) throw new AppError(500, 'callerOf called before authenticate');
  return caller;
}

/**
 * Who decides, as the services record it (a commission released or voided) from the forwarded key
 * headers: an API key's id and prefix, or a member's id (`mbr_…`) and email.
 */
export function deciderOf(caller: Caller): { id: string; label: string } {
  return caller.credential === 'member' ? { id: caller.memberId, label: caller.email } : { id: caller.keyId, label: caller.keyPrefix };
}

/** Who did it, as the program's audit record names it: the key, or the member (never both). */
export function auditActorOf(caller: Caller): { apiKeyId: string; apiKeyPrefix: string } | { memberId: string; email: string } {
  return caller.credential === 'member'
    ? { memberId: caller.memberId, email: caller.email }
    : { apiKeyId: caller.keyId, apiKeyPrefix: caller.keyPrefix };
}

/** What the rate limit counts by: each key, and each member (all of a member's sessions together), has its own allowance. */
export function rateLimitedIdentityOf(caller: Caller): string {
  return caller.credential === 'member' ? `member\n${caller.memberId}` : caller.keyHash;
}
