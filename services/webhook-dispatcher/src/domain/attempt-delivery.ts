import { randomUUID } from 'node:crypto';
import { contextOf, inSpan, SpanStatusCode, traceIdOf, type Logger, type Span, type WebhookMetrics } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { isDelivered, type SendOutcome, type SubscriberClient } from '../data-access/subscriber-client';
import { KEPT_ATTEMPTS, type NewAttempt, type WebhookDeliveryDocument } from '../data-access/webhook-deliveries';
import type { ClaimedDelivery, DueDelivery } from './claim-delivery';
import { CIRCUIT_OPEN, type EndpointCircuits } from './endpoint-circuits';
import { disableEndpoint, recordEndpointFailure, recordEndpointSuccess } from './endpoint-health';
import { releaseNextOf } from './ordered-delivery';
import { nextAttemptDelay, withJitter } from './retry-schedule';
import { webhookHeaders } from './signing';

/** Everything a send needs. */
export type Dispatcher = {
  repositories: Repositories;
  settings: DispatcherSettings;
  logger: Logger;
  client: SubscriberClient;
  circuits: EndpointCircuits;
  metrics?: WebhookMetrics;
  /**
   * Told of a delivery an ended one made due now (the next revision of its object on a PER_OBJECT
   * endpoint), so that it goes without waiting for the next look at the schedule.
   */
  released?: (delivery: DueDelivery) => void;
};

/** What the scheduler joins to an attempt. */
export type AttemptSteps = {
  /** A write of the caller's that must land before the request goes (made beside the attempt's read). */
  before?: () => Promise<void>;
  /** Told once the subscriber has answered (or the request ended, or the circuit kept it), before the outcome is recorded. */
  answered?: () => void;
};

/** How long a claim holds a delivery: longer than any attempt can take. */
export const leaseMs = (settings: DispatcherSettings) => settings.timeoutMs + 60_000;

/** Time an attempt needs beyond the subscriber's timeout to record its outcome. */
export const RECORDING_MARGIN_MS = 10_000;

/**
 * The lease a new delivery is stored with for its first attempt: room for that attempt after a
 * short wait for a free slot. Short, since after a crash the schedule offers it again when it ends.
 */
export const firstAttemptLeaseMs = (settings: DispatcherSettings) => settings.timeoutMs + 2 * RECORDING_MARGIN_MS;

const GONE = 410;

export function toStoredAttempt(outcome: SendOutcome, traceId: string | null): NewAttempt {
  return {
    attemptId: randomUUID(),
    at: outcome.at,
    statusCode: outcome.statusCode,
    latencyMs: outcome.latencyMs,
    responseExcerpt: outcome.responseExcerpt,
    responseBytes: outcome.responseBytes,
    error: outcome.error,
    traceId,
  };
}

/**
 * One attempt of a claimed delivery, then its next step: delivered, retried later on the schedule,
 * or failed. `scheduled` attempts follow the retry schedule through the endpoint's circuit
 * breaker; a `manual` re-send goes out at once and leaves the schedule where it was.
 *
 * The attempt is a span of its own: a scheduled one continues the trace the event was consumed in
 * (stored with the delivery), a manual re-send the trace of the request asking for it. Everything
 * the attempt does runs in it, whichever delivery the scheduler handled before; the POST's client
 * span (node:http's instrumentation) is its child and carries `traceparent` to the subscriber.
 */
export function attemptDelivery(
  dispatcher: Dispatcher,
  delivery: ClaimedDelivery,
  mode: 'scheduled' | 'manual',
  steps: AttemptSteps = {},
): Promise<WebhookDeliveryDocument | null> {
  const parent = mode === 'scheduled' ? contextOf(delivery.traceContext) : undefined;
  const attributes = {
    'webhook.delivery.id': delivery._id,
    'webhook.endpoint.id': delivery.endpointId,
    'webhook.event.type': delivery.eventType,
    'webhook.attempt.mode': mode,
  };
  return inSpan('webhook attempt', { parent, attributes }, (span) => attemptInSpan(dispatcher, delivery, mode, steps, span));
}

async function attemptInSpan(
  dispatcher: Dispatcher,
  delivery: ClaimedDelivery,
  mode: 'scheduled' | 'manual',
  steps: AttemptSteps,
  span: Span,
): Promise<WebhookDeliveryDocument | null> {
  const { repositories, settings, logger, metrics } = dispatcher;
  const { programId } = delivery;
  // Counted once per delivery: when it leaves `pending`, not when a manual re-send repeats it.
  const ending = delivery.status === 'pending';
  const release = { lockedUntil: new Date(0), lockToken: null, updatedAt: new Date() };
  // The caller's write before the request (a first attempt no longer waits) goes beside this read.
  const [endpoint] = await Promise.all([repositories.endpoints.forAttempt(programId, delivery.endpointId), steps.before?.()]);
  if (!endpoint?.active) {
    // Deleted or disabled since the event arrived: it receives nothing further.
    span.setAttribute('webhook.endpoint.active', false);
    await repositories.deliveries.recordHeld(delivery, { ...release, status: 'failed', nextAttemptAt: null });
    await repositories.schedule.unschedule(programId, delivery._id, entrySeenBy(delivery));
    await releaseNext(dispatcher, delivery);
    if (ending) metrics?.ended('failed');
    return null;
  }

  const request = { url: endpoint.url, headers: webhookHeaders(endpoint, delivery.eventId, delivery.body), body: delivery.body };
  // A manual re-send is answered while the caller waits (through the gateway, whose timeout is 10 s):
  // it waits for the subscriber no longer than a test send does, and a slower subscriber is a timeout.
  const outcome =
    mode === 'manual'
      ? await dispatcher.client.send({ ...request, timeoutMs: settings.testTimeoutMs })
      : await dispatcher.circuits.send(endpoint._id, request);
  steps.answered?.();
  if (outcome === CIRCUIT_OPEN) {
    metrics?.attempted('circuit_open');
    span.setAttribute('webhook.circuit_open', true);
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'circuit open: not sent' });
    const later = new Date(Date.now() + withJitter(settings.breaker.resetTimeoutMs));
    await repositories.deliveries.recordHeld(delivery, { ...release, nextAttemptAt: later });
    await repositories.schedule.schedule(delivery, later);
    return null;
  }

  const delivered = isDelivered(outcome);
  if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
  if (!delivered) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? `answered ${outcome.statusCode}` });
  const scheduledAttempts = delivery.scheduledAttempts + (mode === 'scheduled' ? 1 : 0);
  let next: Partial<WebhookDeliveryDocument> = {};
  if (delivered || outcome.statusCode === GONE) {
    next = { status: delivered ? 'succeeded' : 'failed', nextAttemptAt: null };
  } else if (mode === 'scheduled') {
    const delay = nextAttemptDelay(settings, scheduledAttempts, outcome.retryAfterMs);
    next = delay === null ? { status: 'failed', nextAttemptAt: null } : { status: 'pending', nextAttemptAt: new Date(Date.now() + delay) };
    if (delay === null)
      logger.info(
        { deliveryId: delivery._id, endpointId: endpoint._id, attempts: scheduledAttempts },
        'webhook delivery failed: retry schedule used up',
      );
  }
  const attempt = toStoredAttempt(outcome, traceIdOf(span));
  const recorded = await repositories.deliveries.recordHeld(delivery, { ...next, ...release, scheduledAttempts }, attempt);
  // The write matched our lock token, so nobody else changed the delivery while we held it: what it
  // stored is the claimed state plus this change, with no read back.
  const stored: WebhookDeliveryDocument | null = recorded
    ? { ...delivery, ...next, ...release, scheduledAttempts, attempts: [...delivery.attempts, attempt].slice(-KEPT_ATTEMPTS) }
    : null;
  if (stored && next.status === 'pending' && next.nextAttemptAt) await repositories.schedule.schedule(stored, next.nextAttemptAt);
  else if (stored && next.status) {
    await repositories.schedule.unschedule(programId, stored._id, entrySeenBy(delivery));
    // Ended for good: on a PER_OBJECT endpoint, the next revision of the object is no longer held back.
    await releaseNext(dispatcher, stored);
  }
  if (mode === 'scheduled') metrics?.attempted(delivered ? 'succeeded' : 'failed');
  if (stored && ending && (next.status === 'succeeded' || next.status === 'failed')) metrics?.ended(next.status);
  if (stored && delivered && delivery.status !== 'succeeded') metrics?.deliveredAfter(occurredAtOf(delivery));

  // A healthy endpoint (no run of failures) has nothing to reset: no write.
  if (delivered) {
    if (endpoint.failingSince) await recordEndpointSuccess(repositories, programId, endpoint._id);
  } else if (outcome.statusCode === GONE) {
    if (await disableEndpoint(repositories, programId, endpoint._id, 'the subscriber answered 410 Gone', logger)) metrics?.disabled('gone');
  } else if (await recordEndpointFailure(repositories, settings, logger, programId, endpoint._id, outcome.at)) metrics?.disabled('failing');
  return stored;
}

/**
 * When the held delivery's schedule entry is due: at the end of its lease when the schedule or the
 * fan-out leased it (the entry was pushed there), at its next attempt when a re-send leased it.
 */
function entrySeenBy(held: ClaimedDelivery): Date[] {
  return held.nextAttemptAt ? [held.lockedUntil, held.nextAttemptAt] : [held.lockedUntil];
}

async function releaseNext(dispatcher: Dispatcher, ended: WebhookDeliveryDocument): Promise<void> {
  const released = await releaseNextOf(dispatcher.repositories, ended);
  if (released) dispatcher.released?.(released);
}

/** When the event occurred: the payload's `createdAt`, the one place a delivery keeps it. */
function occurredAtOf(delivery: ClaimedDelivery): number {
  const occurredAt = Date.parse((JSON.parse(delivery.body) as { createdAt?: string }).createdAt ?? '');
  return Number.isNaN(occurredAt) ? delivery.createdAt.getTime() : occurredAt;
}
