import { isPublicEventType, type EventEnvelope, type WebhookPayload } from '@affiliate/contracts';
import { isDuplicateKey } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Models } from '../data-access/models';
import { deliveryIdOf } from '../data-access/webhook-deliveries';
import { withJitter } from './retry-schedule';

/** The subscriptions that take an event type: the type itself, its family's wildcard, and `*`. */
export function subscriptionsMatching(eventType: string): string[] {
  return [eventType, `${eventType.split('.')[0]}.*`, '*'];
}

/**
 * Filtering at the endpoint: one pending delivery per active endpoint of the program subscribed to
 * the event. Internal events are never delivered. Every delivery is stored before this resolves
 * (and so before the broker message is acked); a redelivered event finds its deliveries already
 * there by their (event, endpoint) key. Returns how many deliveries are new.
 */
export async function fanOutEvent(models: Models, settings: DispatcherSettings, event: EventEnvelope): Promise<number> {
  if (!isPublicEventType(event.type)) return 0;
  const endpoints = await models.endpoints
    .find({ programId: event.programId, active: true, eventTypes: { $in: subscriptionsMatching(event.type) } })
    .select('_id')
    .lean();
  if (endpoints.length === 0) return 0;

  const payload: WebhookPayload = { id: event.id, event: event.type, createdAt: event.occurredAt, data: event.data };
  const body = JSON.stringify(payload);
  let created = 0;
  for (const endpoint of endpoints) {
    const now = new Date();
    try {
      await models.deliveries.create({
        _id: deliveryIdOf(event.id, endpoint._id),
        programId: event.programId,
        endpointId: endpoint._id,
        eventId: event.id,
        eventType: event.type,
        body,
        status: 'pending',
        attempts: [],
        scheduledAttempts: 0,
        nextAttemptAt: new Date(now.getTime() + withJitter(settings.retryScheduleMs[0] ?? 0)),
        lockedUntil: new Date(0),
        lockToken: null,
        createdAt: now,
        updatedAt: now,
      });
      created += 1;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }
  return created;
}
