import { AppError, forbidden, notFound, unauthorized, withRequestContext } from '@affiliate/platform';
import type { ErrorCode } from '@affiliate/contracts';
import type { RequestHandler, Response } from 'express';
import { hashApiKey } from '../admin/api-keys';
import type { FailedAuthentication } from '../rate-limit/middleware';
import type { KeyDirectory, KeyVerdict } from './key-directory';

export type Caller = Omit<Extract<KeyVerdict, { kind: 'valid' }>, 'kind' | 'apiAccess'>;

const BEARER = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i;

/** The spec's Authentication section: 401 missing / not Bearer / unknown or revoked, 404 program gone, 403 no API access. */
export function authenticate(keys: KeyDirectory, failures: FailedAuthentication): RequestHandler {
  return async (request, response, next) => {
    // RFC 6750: a 401 names the scheme, and the error when a token was presented.
    const refuse = (message: string, challenge: string, code: ErrorCode = 'unauthenticated') => {
      response.setHeader('WWW-Authenticate', challenge);
      return failures.record(request.ip, response, unauthorized(message, code));
    };
    const header = request.header('authorization');
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
    response.locals.caller = caller;
    const requestId = String(response.locals.requestId);
    withRequestContext({ requestId, programId: caller.programId }, () => next());
  };
}

export function callerOf(response: Response): Caller {
  const caller = response.locals.caller as Caller | undefined;
  if (!caller) throw new AppError(500, 'callerOf called before authenticate');
  return caller;
}
