import { isPublicEventType, type EventEnvelope, type WebhookPayload } from '@affiliate/contracts';
import { isDuplicateKey } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Models } from '../data-access/models';
import { deliveryIdOf } from '../data-access/webhook-deliveries';
import { ensureScheduled, type DueDelivery } from './claim-delivery';
import { withJitter } from './retry-schedule';

/** The subscriptions that take an event type: the type itself, its family's wildcard, and `*`. */
export function subscriptionsMatching(eventType: string): string[] {
  return [eventType, `${eventType.split('.')[0]}.*`, '*'];
}

/**
 * Filtering at the endpoint: one pending delivery per active endpoint of the program subscribed to
 * the event. Internal events are never delivered. Every delivery is stored before this resolves
 * (and so before the broker message is acked); a redelivered event finds its deliveries already
 * there by their (event, endpoint) key. Each new delivery is on the schedule too, so that a crash
 * before its first attempt never strands it. Returns the new deliveries, for their first attempt.
 */
export async function fanOutEvent(models: Models, settings: DispatcherSettings, event: EventEnvelope): Promise<DueDelivery[]> {
  if (!isPublicEventType(event.type)) return [];
  const endpoints = await models.endpoints
    .find({ programId: event.programId, active: true, eventTypes: { $in: subscriptionsMatching(event.type) } })
    .select('_id')
    .lean();
  if (endpoints.length === 0) return [];

  const payload: WebhookPayload = { id: event.id, event: event.type, createdAt: event.occurredAt, data: event.data };
  const body = JSON.stringify(payload);
  const created: DueDelivery[] = [];
  for (const endpoint of endpoints) {
    const now = new Date();
    const delivery = { _id: deliveryIdOf(event.id, endpoint._id), programId: event.programId, endpointId: endpoint._id };
    const dueAt = new Date(now.getTime() + withJitter(settings.retryScheduleMs[0] ?? 0));
    // Scheduled first: a crash between the two writes leaves an entry whose delivery the
    // redelivered event creates (or, if it never comes, an entry the sender discards).
    await ensureScheduled(models, delivery, dueAt);
    try {
      await models.deliveries.create({
        ...delivery,
        eventId: event.id,
        eventType: event.type,
        body,
        status: 'pending',
        attempts: [],
        scheduledAttempts: 0,
        nextAttemptAt: dueAt,
        lockedUntil: new Date(0),
        lockToken: null,
        createdAt: now,
        updatedAt: now,
      });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      continue; // a redelivered event: this delivery exists already
    }
    created.push(delivery);
  }
  return created;
}
