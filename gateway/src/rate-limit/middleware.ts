import { createHash } from 'node:crypto';
import { AppError } from '@affiliate/platform';
import type { RequestHandler } from 'express';
import { callerOf } from '../auth/authenticate';
import type { RateLimit } from '../config';
import type { RateLimits } from './rate-limiter';

/**
 * Per (key, route, method), as the spec says. The limiter key is a hash of the key's own hash,
 * the route and the method: the API key itself never reaches Redis.
 */
export function rateLimit(limits: RateLimits, defaultLimit: RateLimit): RequestHandler {
  return async (request, response, next) => {
    const caller = callerOf(response);
    const route = String(response.locals.routePath);
    const limiterKey = createHash('sha256').update(`${caller.keyHash}\n${request.method}\n${route}`).digest('base64url');
    const limit = caller.rateLimit ?? defaultLimit;
    const verdict = await limits.consume(limiterKey, limit);
    response.setHeader('RateLimit-Limit', String(verdict.limit));
    response.setHeader('RateLimit-Remaining', String(verdict.remaining));
    response.setHeader('RateLimit-Reset', String(verdict.resetSeconds));
    if (!verdict.allowed) {
      response.setHeader('Retry-After', String(verdict.resetSeconds));
      throw new AppError(
        429,
        `Rate limit exceeded: at most ${limit.points} requests per ${limit.duration} s for this API key on ${request.method} ${route}; retry after ${verdict.resetSeconds} s`,
      );
    }
    next();
  };
}
