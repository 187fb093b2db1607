import type { RequestHandler } from 'express';
import { AppError } from '../errors';
import type { WebhookBacklog } from '../events/backlog-news';
import type { Logger } from '../logger';
import type { ShedReason } from '../metrics';
import { PROGRAM_ID_HEADER } from './internal-auth';

export type SheddingSettings = {
  /** Deliveries and events the dispatchers hold for all programs together; from there every program's event-creating writes are refused. */
  webhookBacklog: number;
  /** The same for one program; from there that program's event-creating writes are refused while the others are still served. */
  webhookBacklogPerProgram: number;
  /** Age of this service's oldest event not yet published; from there every program's event-creating writes are refused. */
  outboxAgeMs: number;
};

/**
 * Per program below the dispatcher's fan-out window per program (WEBHOOK_FAN_OUT_WINDOW_PER_PROGRAM,
 * 1,000), so that a program's backlog is seen before it spills back into the broker's queue (where
 * nobody counts it per program, and each message bounces through the retry queue); the whole five
 * programs' worth. The outbox's bound is above the
 * broker outages that the outbox is there to ride out (RELIABILITY.md: 20 s).
 */
export const DEFAULT_SHEDDING = {
  webhookBacklog: 4000,
  webhookBacklogPerProgram: 800,
  outboxAgeMs: 60_000,
} satisfies SheddingSettings;

/**
 * As admission's: the dispatcher works off a bound's worth in a second or a few, and a client coming
 * back sooner keeps it busy (a fan-out to 50 endpoints reaches the bound with 16 events).
 */
export const RETRY_AFTER_BACKLOG_SECONDS = 1;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export type BacklogSheddingOptions = {
  settings: SheddingSettings;
  serviceName: string;
  logger: Logger;
  /** What the dispatchers say they hold (nothing when no news came lately). */
  webhookBacklog: () => WebhookBacklog;
  /** When this service's oldest unpublished event began to wait (the relay's backlog()). */
  outboxOldestSince: () => number | undefined;
  /** Writes of this service that create no event (`POST /clicks`, as method and path): never refused here. */
  writesWithoutEvents: readonly string[];
  onShed?: (reason: ShedReason) => void;
};

/**
 * Overload is shed at the door: while the events already accepted wait too long to go out, a write
 * that would add more is answered `503` with `Retry-After` before it is run, so it changes nothing,
 * and the pipeline works off what it holds at its own rate instead of falling behind without bound.
 * Reads, internal calls (parts of a request already accepted, and Stripe's webhooks at their intake,
 * which Stripe would only send again) and writes without events are served.
 *
 * Programs are refused in the order admission refuses them: a program whose own webhooks are
 * behind first (its per-program bound), every program only when the whole is past its bound. Each
 * service learns the dispatchers' backlog from their news on the broker (BacklogNews) and never
 * asks the dispatcher, so a dispatcher that is down makes no service refuse anything.
 */
export function shedWhenBacklogged(options: BacklogSheddingOptions): RequestHandler {
  const { settings, serviceName, logger } = options;
  const exempt = new Set(options.writesWithoutEvents);
  // One warning per cause and quarter of a minute: a refusal may come hundreds of times a second.
  const warned = new Map<string, number>();

  const refuse = (reason: ShedReason, cause: string, message: string) => {
    options.onShed?.(reason);
    if (Date.now() - (warned.get(cause) ?? 0) > 15_000) {
      warned.set(cause, Date.now());
      logger.warn({ reason: cause }, 'events are behind: answering event-creating writes 503 with Retry-After');
    }
    return new AppError(503, message, { code: 'service_busy', retryAfterSeconds: RETRY_AFTER_BACKLOG_SECONDS });
  };

  return (request, _response, next) => {
    // As the router matches it: with or without a trailing slash.
    const route = `${request.method} ${request.path.replace(/(.)\/+$/, '$1')}`;
    if (!WRITE_METHODS.has(request.method) || request.path.startsWith('/internal/') || exempt.has(route)) return next();
    const since = options.outboxOldestSince();
    if (since !== undefined && Date.now() - since >= settings.outboxAgeMs)
      return next(refuse('outbox_age', 'outbox age', `The ${serviceName} service is busy publishing earlier events; retry in a moment`));
    const backlog = options.webhookBacklog();
    const program = request.header(PROGRAM_ID_HEADER) ?? '';
    if (backlog.ofProgram(program) >= settings.webhookBacklogPerProgram)
      // This program's backlog only: the others keep being served.
      return next(
        refuse(
          'webhook_backlog',
          'program backlog',
          `This program has too many webhooks waiting to be delivered; the ${serviceName} service accepts new changes again once they go out; retry in a moment`,
        ),
      );
    if (backlog.total >= settings.webhookBacklog)
      return next(refuse('webhook_backlog', 'backlog', `The ${serviceName} service is busy; webhooks are behind; retry in a moment`));
    next();
  };
}
