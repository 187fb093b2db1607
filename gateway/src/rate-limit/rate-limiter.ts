import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimit } from '../config';

export type RateDecision = {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  /** Requests counted in this window, this one included (past `limit` when refused). */
  consumed: number;
};

/**
 * rate-limiter-flexible keeps one limiter per (points, duration) pair, so programs with their own
 * limit get their own counters. With Redis the counters are shared by every replica; when Redis
 * does not answer, an in-memory insurance limiter with the same limit takes over (each replica
 * then counts alone, which errs on the generous side rather than refusing traffic).
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(private readonly redis?: Redis) {}

  async consume(key: string, limit: RateLimit): Promise<RateDecision> {
    const limiter = this.limiterFor(limit);
    try {
      const result = await limiter.consume(key);
      return decision(true, limit, result);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return decision(false, limit, rejection);
      throw rejection;
    }
  }

  /** The state of a bucket without counting a request: not allowed once it is used up. */
  async peek(key: string, limit: RateLimit): Promise<RateDecision> {
    const unused = { allowed: true, limit: limit.points, remaining: limit.points, resetSeconds: limit.duration, consumed: 0 };
    // Redis away: let the check pass; the failure that follows is still counted by the insurance limiter.
    const result = await this.limiterFor(limit)
      .get(key)
      .catch(() => null);
    if (!result) return unused;
    return decision(result.consumedPoints <= limit.points, limit, result);
  }

  private limiterFor(limit: RateLimit): RateLimiterAbstract {
    const id = `${limit.points}:${limit.duration}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const options = { points: limit.points, duration: limit.duration, keyPrefix: `gateway:rate:${id}` };
      limiter = this.redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.redis,
            // While Redis is away, go straight to the insurance limiter instead of queueing commands.
            rejectIfRedisNotReady: true,
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

function decision(allowed: boolean, limit: RateLimit, result: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit: limit.points,
    remaining: Math.max(0, result.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
    consumed: result.consumedPoints,
  };
}
