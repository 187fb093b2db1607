import { createHash } from 'node:crypto';
import { AppError } from '@affiliate/platform';
import type { RequestHandler, Response } from 'express';
import { callerOf, rateLimitedIdentityOf } from '../auth/authenticate';
import type { RateLimit } from '../config';
import type { RateLimits } from './rate-limiter';

/**
 * Reads share a bucket: HEAD and OPTIONS are GETs for the limiter, so switching verbs buys nothing;
 * any other method counts as itself (node only parses a fixed set of methods).
 */
const limitedMethodOf = (method: string) => (method === 'HEAD' || method === 'OPTIONS' ? 'GET' : method);

/**
 * Per (key, route template, method), as the spec says (a team member's console session counts as one
 * key per member): the template (`/api/v1/coupons`, or one
 * `unmatched` for every path no operation has), never the raw path, so a made-up path is not a
 * fresh bucket. The limiter key is a hash of the key's own hash, the route and the method: the API
 * key itself never reaches Redis.
 */
export function rateLimit(limits: RateLimits, defaultLimit: RateLimit): RequestHandler {
  return async (request, response, next) => {
    const caller = callerOf(response);
    const route = String(response.locals.metricsRoute);
    const method = limitedMethodOf(request.method);
    const limiterKey = createHash('sha256')
      .update(`${rateLimitedIdentityOf(caller)}\n${method}\n${route}`)
      .digest('base64url');
    const limit = caller.rateLimit ?? defaultLimit;
    const verdict = await limits.take(limiterKey, limit);
    // draft-ietf-httpapi-ratelimit-headers: the policy and what is left of it, as structured fields...
    response.setHeader('RateLimit-Policy', `"key-route";q=${limit.points};w=${limit.duration}`);
    response.setHeader('RateLimit', `"key-route";r=${verdict.remaining};t=${verdict.resetSeconds}`);
    // ...and the older draft's three headers, which existing clients read.
    response.setHeader('RateLimit-Limit', String(verdict.limit));
    response.setHeader('RateLimit-Remaining', String(verdict.remaining));
    response.setHeader('RateLimit-Reset', String(verdict.resetSeconds));
    if (!verdict.allowed) {
      response.setHeader('Retry-After', String(verdict.resetSeconds));
      throw new AppError(
        429,
        `Rate limit exceeded: at most ${limit.points} requests per ${limit.duration} s for this ${caller.credential === 'member' ? 'team member' : 'API key'} on ${method} ${route}; retry after ${verdict.resetSeconds} s`,
        { code: 'rate_limited' },
      );
    }
    next();
  };
}

/**
 * Routes that need no credential (the docs and the console's files, the document, paths that exist
 * nowhere, admin requests without the right token), counted per client address: nobody can make the
 * gateway serve files or write audit records as fast as they can send. The probes (/healthz,
 * /readyz) are never limited: behind an ingress every probe and client may share one address, and
 * an orchestrator whose probes are refused restarts a healthy gateway.
 */
export function addressRateLimit(limits: RateLimits, limit: RateLimit): RequestHandler {
  return async (request, response, next) => {
    const limiterKey = createHash('sha256')
      .update(`anonymous\n${request.ip ?? 'unknown'}`)
      .digest('base64url');
    const verdict = await limits.consume(limiterKey, limit);
    if (!verdict.allowed) {
      response.setHeader('Retry-After', String(verdict.resetSeconds));
      throw new AppError(429, `Too many requests without a credential from this address; retry after ${verdict.resetSeconds} s`, {
        code: 'address_rate_limited',
      });
    }
    next();
  };
}

/**
 * Requests that fail authentication, counted per client address: past the limit they get 429
 * instead of 401, so guessing keys or tokens (or flooding without one) is slow. Callers with a valid
 * credential never touch this bucket. With `escalating`, each further failure in the window doubles
 * the Retry-After (2 s, 4 s, 8 s… up to the window's end): advice to a client, not a wait imposed,
 * since the right credential, checked first, is never refused (SECURITY.md, the admin lockout).
 */
export class FailedAuthentication {
  constructor(
    private readonly limits: RateLimits,
    private readonly limit: RateLimit,
    private readonly scope: 'api' | 'admin',
    private readonly escalating = false,
  ) {}

  private keyOf(address: string | undefined, bucket = 'failed-auth'): string {
    return createHash('sha256')
      .update(`${bucket}\n${this.scope}\n${address ?? 'unknown'}`)
      .digest('base64url');
  }

  /** Counts one failure; the error to answer with, a 429 once this address is over its limit. */
  async record(address: string | undefined, response: Response, refusal: AppError): Promise<AppError> {
    const verdict = await this.limits.consume(this.keyOf(address), this.limit);
    if (verdict.allowed) return refusal;
    const overBy = verdict.consumed - this.limit.points;
    return this.throttled(response, this.escalating ? Math.min(verdict.resetSeconds, 2 ** Math.min(overBy, 30)) : verdict.resetSeconds);
  }

  /**
   * Checked before a key not known valid (KeyDirectory.isKnownValid) is looked up: null when it may
   * be; else the 429. An address over its failures has one such lookup per window (a new client
   * behind the address it shares with a guesser gets its first request through), and every other
   * unknown key it presents is refused without a database read. Keys known valid never come here.
   */
  async beforeLookup(address: string | undefined, response: Response): Promise<AppError | null> {
    const failures = await this.limits.peek(this.keyOf(address), this.limit);
    if (failures.allowed) return null;
    const lookup = await this.limits.consume(this.keyOf(address, 'lookup-while-throttled'), { points: 1, duration: this.limit.duration });
    return lookup.allowed ? null : this.throttled(response, Math.max(failures.resetSeconds, lookup.resetSeconds));
  }

  private throttled(response: Response, resetSeconds: number): AppError {
    response.setHeader('Retry-After', String(resetSeconds));
    return new AppError(429, `Too many failed authentication attempts from this address; retry after ${resetSeconds} s`, {
      code: 'authentication_rate_limited',
    });
  }
}
