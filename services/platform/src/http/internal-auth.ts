import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors';
import { withRequestContext } from '../logger';

export const INTERNAL_TOKEN_HEADER = 'x-internal-token';
export const PROGRAM_ID_HEADER = 'x-program-id';
export const REQUEST_ID_HEADER = 'x-request-id';
/** The API key a request came with (its id and prefix, as the key list shows them), for decisions a service records by whom (the review queue). */
export const API_KEY_ID_HEADER = 'x-api-key-id';
export const API_KEY_PREFIX_HEADER = 'x-api-key-prefix';
/** The operator's cap on the program's webhook endpoints, which the gateway knows and the dispatcher enforces. */
export const MAX_WEBHOOK_ENDPOINTS_HEADER = 'x-program-max-webhook-endpoints';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Compares digests so that neither the length nor the content of the secret leaks through timing. */
export function constantTimeEquals(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Program scope can only come from the gateway: a request without the internal credential is
 * refused, and the program id it carries becomes the scope of every query of the request.
 */
export function requireInternalCaller(internalToken: string) {
  return (request: Request, response: Response, next: NextFunction) => {
    const presented = request.header(INTERNAL_TOKEN_HEADER);
    if (!presented || !constantTimeEquals(presented, internalToken)) {
      return next(new AppError(401, 'Missing or invalid internal credential'));
    }
    const programId = request.header(PROGRAM_ID_HEADER);
    if (!programId || !UUID.test(programId)) {
      return next(new AppError(401, 'Missing or invalid program scope'));
    }
    response.locals.programId = programId.toLowerCase();
    const requestId = String(response.locals.requestId);
    withRequestContext({ requestId, programId }, () => next());
  };
}

/** The program of the current request, set by requireInternalCaller. */
export function programIdOf(response: Response): string {
  const programId: unknown = response.locals.programId;
  if (typeof programId !== 'string') throw new Error('programIdOf called outside requireInternalCaller');
  return programId;
}

/** The API key of the current request as the gateway forwarded it; null fields when it did not (a service's own caller). */
export function apiKeyOf(request: Request): { keyId: string | null; keyPrefix: string | null } {
  return { keyId: request.header(API_KEY_ID_HEADER) ?? null, keyPrefix: request.header(API_KEY_PREFIX_HEADER) ?? null };
}
