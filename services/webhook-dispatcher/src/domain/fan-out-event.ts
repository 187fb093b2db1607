import { randomUUID } from 'node:crypto';
import { currentTraceCarrier } from '@affiliate/platform';
import { isPublicEventType, type EventEnvelope, type PublicEventType, type WebhookPayload } from '@affiliate/contracts';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { deliveryIdOf, type ClaimedDelivery } from '../data-access/webhook-deliveries';
import { firstAttemptLeaseMs } from './attempt-delivery';
import { enterOrder } from './ordered-delivery';

/**
 * Filtering at the endpoint: one pending delivery per active endpoint of the program subscribed to
 * the event. Internal events are never delivered (nor stored); public ones are stored once, by id,
 * for GET /events. Every delivery is stored before this resolves
 * (and so before the broker message is acked); a redelivered event finds its deliveries already
 * there by their (event, endpoint) key.
 *
 * Each new delivery is stored already leased to this process, for its first attempt, which the
 * caller makes at once with the returned documents: no claim, no read back. Its schedule entry is
 * due when the lease ends, so a crash before that attempt strands nothing, and no other sender
 * takes it meanwhile; it is marked waiting until that attempt starts (the backlog gauges).
 */
export async function fanOutEvent(
  repositories: Repositories,
  settings: DispatcherSettings,
  event: EventEnvelope,
): Promise<ClaimedDelivery[]> {
  if (!isPublicEventType(event.type)) return [];
  const payload = webhookPayloadOf(event, event.type);
  const body = JSON.stringify(payload);
  // Kept whether or not an endpoint takes it (GET /events, backfills, replays), before any delivery.
  await repositories.events.record(event.programId, payload, body, settings.eventRetentionMs);
  const endpoints = await repositories.endpoints.subscribedTo(event.programId, event.type, settings.maxDeliveriesPerEvent);
  if (endpoints.length === 0) return [];

  // Events without a revision (stored in an outbox before revisions, or about an object other than
  // the one written) take no place in an order: they go out when due, as on any endpoint.
  const order = event.revision === undefined ? {} : { objectKey: objectKeyOf(event), revision: event.revision };
  // This consumption's trace (itself continuing the publisher's): each attempt continues it.
  const traceContext = currentTraceCarrier();
  const now = new Date();
  const lockedUntil = new Date(now.getTime() + firstAttemptLeaseMs(settings));
  const leased: ClaimedDelivery[] = endpoints.map(({ _id: endpointId, ordering }) => ({
    _id: deliveryIdOf(event.id, endpointId),
    programId: event.programId,
    endpointId,
    eventId: event.id,
    eventType: event.type,
    body,
    ...(ordering === 'PER_OBJECT' ? order : {}),
    ...(traceContext ? { traceContext } : {}),
    status: 'pending',
    attempts: [],
    scheduledAttempts: 0,
    nextAttemptAt: now,
    lockedUntil,
    lockToken: randomUUID(),
    createdAt: now,
    updatedAt: now,
  }));
  // One write each for all the event's endpoints. Scheduled first: a crash between the two writes
  // leaves entries whose deliveries the redelivered event creates (or, if it never comes, entries the
  // sender discards).
  await repositories.schedule.ensureAll(event.programId, leased, lockedUntil, now);
  const stored = await repositories.deliveries.insertNew(event.programId, leased);
  // Not stored: a redelivered event, whose delivery exists already (and is the schedule's to send).
  const created = leased.filter((_delivery, index) => stored[index]);
  // Taken into its object's order only once stored, so a redelivered event never makes an ended
  // delivery pending there again; a crash in between leaves its successor to the gap's bounded wait.
  for (const delivery of created) await enterOrder(repositories, settings, delivery);
  return created;
}

/**
 * The body subscribers receive: the specification's four fields, then the object's revision and, on
 * `*.updated`, what the change altered, when the event carries them (not on events stored before).
 */
export function webhookPayloadOf(event: EventEnvelope, type: PublicEventType): WebhookPayload {
  return {
    id: event.id,
    event: type,
    createdAt: event.occurredAt,
    data: event.data,
    ...(event.revision === undefined ? {} : { revision: event.revision }),
    ...(event.previousAttributes === undefined ? {} : { previousAttributes: event.previousAttributes }),
  };
}

/** The object an event is about, across families: `sale:<id>`. */
export const objectKeyOf = (event: EventEnvelope): string => `${event.type.split('.')[0]}:${String(event.data.id)}`;
