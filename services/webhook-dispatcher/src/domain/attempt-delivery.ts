import type { Logger } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { isDelivered, type SendOutcome, type SubscriberClient } from '../data-access/subscriber-client';
import { KEPT_ATTEMPTS, type StoredAttempt, type WebhookDeliveryDocument } from '../data-access/webhook-deliveries';
import type { ClaimedDelivery } from './claim-delivery';
import { CIRCUIT_OPEN, type EndpointCircuits } from './endpoint-circuits';
import { disableEndpoint, recordEndpointFailure, recordEndpointSuccess } from './endpoint-health';
import { nextAttemptDelay, withJitter } from './retry-schedule';
import { webhookHeaders } from './signing';

/** Everything a send needs. */
export type Dispatcher = {
  repositories: Repositories;
  settings: DispatcherSettings;
  logger: Logger;
  client: SubscriberClient;
  circuits: EndpointCircuits;
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

export function toStoredAttempt(outcome: SendOutcome): StoredAttempt {
  return {
    at: outcome.at,
    statusCode: outcome.statusCode,
    latencyMs: outcome.latencyMs,
    responseExcerpt: outcome.responseExcerpt,
    responseBytes: outcome.responseBytes,
    error: outcome.error,
  };
}

/**
 * One attempt of a claimed delivery, then its next step: delivered, retried later on the schedule,
 * or failed. `scheduled` attempts follow the retry schedule through the endpoint's circuit
 * breaker; a `manual` re-send goes out at once and leaves the schedule where it was.
 */
export async function attemptDelivery(dispatcher: Dispatcher, delivery: ClaimedDelivery, mode: 'scheduled' | 'manual'): Promise<WebhookDeliveryDocument | null> {
  const { repositories, settings, logger } = dispatcher;
  const { programId } = delivery;
  const release = { lockedUntil: new Date(0), lockToken: null, updatedAt: new Date() };
  const endpoint = await repositories.endpoints.byId(programId, delivery.endpointId);
  if (!endpoint?.active) {
    // Deleted or disabled since the event arrived: it receives nothing further.
    await repositories.deliveries.recordHeld(delivery, { ...release, status: 'failed', nextAttemptAt: null });
    await repositories.schedule.unschedule(programId, delivery._id);
    return null;
  }

  const request = { url: endpoint.url, headers: webhookHeaders(endpoint, delivery.eventId, delivery.body), body: delivery.body };
  // A manual re-send is answered while the caller waits (through the gateway, whose timeout is 10 s):
  // it waits for the subscriber no longer than a test send does, and a slower subscriber is a timeout.
  const outcome = mode === 'manual' ? await dispatcher.client.send({ ...request, timeoutMs: settings.testTimeoutMs }) : await dispatcher.circuits.send(endpoint._id, request);
  if (outcome === CIRCUIT_OPEN) {
    const later = new Date(Date.now() + withJitter(settings.breaker.resetTimeoutMs));
    await repositories.deliveries.recordHeld(delivery, { ...release, nextAttemptAt: later });
    await repositories.schedule.schedule(delivery, later);
    return null;
  }

  const delivered = isDelivered(outcome);
  const scheduledAttempts = delivery.scheduledAttempts + (mode === 'scheduled' ? 1 : 0);
  let next: Partial<WebhookDeliveryDocument> = {};
  if (delivered || outcome.statusCode === GONE) {
    next = { status: delivered ? 'succeeded' : 'failed', nextAttemptAt: null };
  } else if (mode === 'scheduled') {
    const delay = nextAttemptDelay(settings, scheduledAttempts, outcome.retryAfterMs);
    next = delay === null ? { status: 'failed', nextAttemptAt: null } : { status: 'pending', nextAttemptAt: new Date(Date.now() + delay) };
    if (delay === null) logger.info({ deliveryId: delivery._id, endpointId: endpoint._id, attempts: scheduledAttempts }, 'webhook delivery failed: retry schedule used up');
  }
  const attempt = toStoredAttempt(outcome);
  const recorded = await repositories.deliveries.recordHeld(delivery, { ...next, ...release, scheduledAttempts }, attempt);
  // The write matched our lock token, so nobody else changed the delivery while we held it: what it
  // stored is the claimed state plus this change, with no read back.
  const stored: WebhookDeliveryDocument | null =
    recorded
      ? { ...delivery, ...next, ...release, scheduledAttempts, attempts: [...delivery.attempts, attempt].slice(-KEPT_ATTEMPTS) }
      : null;
  if (stored && next.status === 'pending' && next.nextAttemptAt) await repositories.schedule.schedule(stored, next.nextAttemptAt);
  else if (stored && next.status) await repositories.schedule.unschedule(programId, stored._id);

  // A healthy endpoint (no run of failures) has nothing to reset: no write.
  if (delivered) {
    if (endpoint.failingSince) await recordEndpointSuccess(repositories, programId, endpoint._id);
  }
  else if (outcome.statusCode === GONE) await disableEndpoint(repositories, programId, endpoint._id, 'the subscriber answered 410 Gone', logger);
  else await recordEndpointFailure(repositories, settings, logger, programId, endpoint._id, outcome.at);
  return stored;
}
