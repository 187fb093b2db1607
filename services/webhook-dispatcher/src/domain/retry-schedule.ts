import type { DispatcherSettings } from '../config';

/** ±20 %, so that the retries of many deliveries failing together do not arrive together. */
export function withJitter(delayMs: number, random = Math.random): number {
  return Math.round(delayMs * (0.8 + 0.4 * random()));
}

/**
 * Delay before the next scheduled attempt after `attemptsMade` of them, or null when the schedule
 * is used up. A Retry-After the subscriber sent is honoured (never earlier), up to a bound.
 */
export function nextAttemptDelay(settings: DispatcherSettings, attemptsMade: number, retryAfterMs: number | null): number | null {
  const step = settings.retryScheduleMs[attemptsMade];
  if (step === undefined) return null;
  const notBefore = retryAfterMs === null ? 0 : Math.min(retryAfterMs, settings.maxRetryAfterMs);
  return Math.max(withJitter(step), notBefore);
}
