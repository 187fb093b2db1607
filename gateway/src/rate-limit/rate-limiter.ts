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
  /**
   * Per limit and limiter key (leaseName()): the requests this replica reserved in Redis and has not
   * spent yet (take()). Keyed by the limit as the Redis counter is, so a program whose limit changed
   * is counted against the new limit at once, never from a share of the old one.
   */
  private readonly leases = new Map<string, Lease>();

  constructor(private readonly redis?: Redis) {}

  /**
   * Counts one request against a limit as consume() does, but without a Redis round trip per
   * request: this replica reserves a share of what is left of the window in one INCRBY (a lease)
   * and spends it locally, reserving the next share in the background when half is spent. The
   * count in Redis is of reservations, so the replicas together never admit more than the limit;
   * what a replica reserved and did not spend is the tolerance, on the strict side: a share is at
   * most 1/LEASE_DIVISOR of what was left when this replica last asked Redis (MAX_LEASE at most), so
   * a key spread over R replicas can be refused at most times 1.5 shares early in a window (a
   * share and the rest of the one before). Below LEASE_DIVISOR * 2 left, a share is one request:
   * small limits, and the end of every window, are counted request by request in Redis, exactly as
   * consume(). A replica idle since early in the window still sees more left than there is and may
   * ask for a larger share near its end; Redis grants at most what is left, so that too is refused
   * early, never admitted over. Once the window is used up, its refusals are answered here until it
   * ends.
   */
  take(key: string, limit: RateLimit): RateDecision | Promise<RateDecision> {
    const now = Date.now();
    const name = leaseName(key, limit);
    let lease = this.leases.get(name);
    if (lease && lease.windowEnd <= now) {
      this.leases.delete(name);
      lease = undefined;
    }
    if (lease && lease.left > 0) {
      lease.left -= 1;
      if (lease.left <= lease.lastShare / 2 && !lease.reserving && lease.reserved < limit.points) {
        // The next share, before this one runs out: no request waits for Redis while the window lasts.
        this.reserve(key, limit).catch(() => undefined);
      }
      return leasedDecision(true, limit, lease, now);
    }
    // The window is used up (every replica's reservations together): refused here until it ends.
    if (lease && lease.reserved >= limit.points) return leasedDecision(false, limit, lease, now);
    return this.takeAfterReserving(key, limit, lease);
  }

  private async takeAfterReserving(key: string, limit: RateLimit, lease: Lease | undefined): Promise<RateDecision> {
    const share = shareOf(limit, lease);
    // A share is being reserved already: wait for it rather than reserve another (one INCRBY for a
    // burst). Not for shares of one request: those are reserved side by side, as consume() would.
    if (lease?.reserving && share > 1) {
      await lease.reserving.catch(() => undefined);
      return this.take(key, limit);
    }
    const held = await this.reserve(key, limit, share);
    const now = Date.now();
    if (held.left <= 0) return leasedDecision(false, limit, held, now);
    held.left -= 1;
    return leasedDecision(true, limit, held, now);
  }

  /** One INCRBY of a share; added to the lease when it is the same window, else a new lease. */
  private async reserve(key: string, limit: RateLimit, share = shareOf(limit, this.leases.get(leaseName(key, limit)))): Promise<Lease> {
    const name = leaseName(key, limit);
    let lease = this.leases.get(name);
    if (!lease) {
      // Until Redis answers, the window is the one this reservation opens (or finds): requests that come meanwhile wait for it.
      lease = { left: 0, reserved: 0, lastShare: share, windowEnd: Date.now() + limit.duration * 1000, fresh: true, reserving: undefined };
      this.remember(name, lease);
    }
    const reservation = this.consumeShare(key, limit, share);
    lease.reserving = reservation;
    try {
      const res = await reservation;
      const now = Date.now();
      const windowEnd = now + res.msBeforeNext;
      // What was left of the limit before this share was counted, at most the share.
      const granted = Math.max(0, Math.min(share, limit.points - (res.consumedPoints - share)));
      const live = this.leases.get(name);
      // The same window if its end is within half a window of the lease's; a new window drops what was left of the old one.
      const sameWindow = live !== undefined && !live.fresh && Math.abs(live.windowEnd - windowEnd) < (limit.duration * 1000) / 2;
      let held: Lease;
      if (live && ((live === lease && live.fresh) || sameWindow)) held = live;
      else {
        held = { left: 0, reserved: 0, lastShare: share, windowEnd, fresh: false, reserving: undefined };
        // A share of a window that ended while it was reserved serves the request that asked for it
        // (it came in that window), never the next window: not one whose reservation is under way,
        // nor one already held (a late answer names a window that ends before the live lease's).
        if (!live || (!live.fresh && windowEnd > live.windowEnd)) this.remember(name, held);
      }
      if (held.fresh) held.windowEnd = windowEnd;
      held.fresh = false;
      held.left += granted;
      held.reserved = Math.max(held.reserved, res.consumedPoints);
      held.lastShare = share;
      return held;
    } finally {
      if (lease.reserving === reservation) lease.reserving = undefined;
    }
  }

  private async consumeShare(key: string, limit: RateLimit, share: number): Promise<RateLimiterRes> {
    try {
      return await this.limiterFor(limit).consume(key, share);
    } catch (rejection) {
      // Refused (the window's count passed the limit with this share): what was left of it is still granted.
      if (rejection instanceof RateLimiterRes) return rejection;
      throw rejection;
    }
  }
  /** Bounded like the key cache: leases whose window ended go first, then the oldest. */
  private remember(name: string, lease: Lease): void {
    this.leases.delete(name);
    this.leases.set(name, lease);
    if (this.leases.size <= MAX_LEASES) return;
    const now = Date.now();
    for (const [other, held] of this.leases) if (held.windowEnd <= now) this.leases.delete(other);
    while (this.leases.size > MAX_LEASES) {
      const oldest = this.leases.keys().next().value;
      if (oldest === undefined) break;
      this.leases.delete(oldest);
    }
  }

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

  /** Gives back one request counted by consume() (a sign-in that turned out right); best effort, as the insurance limiter's count may be the one that took it. */
  async refund(key: string, limit: RateLimit): Promise<void> {
    await this.limiterFor(limit)
      .reward(key, 1)
      .catch(() => undefined);
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

/** What one replica holds of one window: `reserved` is the window's count in Redis when it last looked (every replica's reservations). */
type Lease = {
  left: number;
  reserved: number;
  lastShare: number;
  windowEnd: number;
  /** Opened by a reservation Redis has not answered yet: its window is the one the answer names. */
  fresh: boolean;
  reserving: Promise<unknown> | undefined;
};

/** A share is at most this fraction of what is left of the window (take()). */
const LEASE_DIVISOR = 16;
/** ...and at most this many requests: past a few hundred a second, one INCRBY per share is already rare. */
const MAX_LEASE = 1000;
const MAX_LEASES = 10_000;

/** A lease is of one limit as well as one key: the Redis counter it was reserved from is named after the limit (limiterFor()). */
function leaseName(key: string, limit: RateLimit): string {
  return `${limit.points}:${limit.duration}:${key}`;
}

/** At most 1/LEASE_DIVISOR of what is left of the window as far as this replica knows, at least one request. */
function shareOf(limit: RateLimit, lease: Lease | undefined): number {
  return Math.min(MAX_LEASE, Math.max(1, Math.floor((limit.points - (lease?.reserved ?? 0)) / LEASE_DIVISOR)));
}

function leasedDecision(allowed: boolean, limit: RateLimit, lease: Lease, now: number): RateDecision {
  // Spent = reserved by every replica (as far as this one knows) minus what this one still holds: what
  // the others reserved since this one last asked Redis is not in it, so Remaining may read higher than
  // what is left across replicas (never higher than what this replica's own requests left).
  const spent = Math.min(lease.reserved, limit.points) - lease.left;
  return {
    allowed,
    limit: limit.points,
    remaining: Math.max(0, limit.points - spent),
    resetSeconds: Math.max(1, Math.ceil((lease.windowEnd - now) / 1000)),
    consumed: allowed ? spent : Math.max(lease.reserved, limit.points + 1),
  };
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
