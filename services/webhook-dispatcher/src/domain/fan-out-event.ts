import { isPublicEventType, type EventEnvelope, type WebhookPayload } from '@affiliate/contracts';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { deliveryIdOf } from '../data-access/webhook-deliveries';
import type { DueDelivery } from './claim-delivery';
import { withJitter } from './retry-schedule';

/**
 * Filtering at the endpoint: one pending delivery per active endpoint of the program subscribed to
 * the event. Internal events are never delivered. Every delivery is stored before this resolves
 * (and so before the broker message is acked); a redelivered event finds its deliveries already
 * there by their (event, endpoint) key. Each new delivery is on the schedule too, so that a crash
 * before its first attempt never strands it. Returns the new deliveries, for their first attempt.
 */
export async function fanOutEvent(repositories: Repositories, settings: DispatcherSettings, event: EventEnvelope): Promise<DueDelivery[]> {
  if (!isPublicEventType(event.type)) return [];
  const endpointIds = await repositories.endpoints.subscribedTo(event.programId, event.type);
  if (endpointIds.length === 0) return [];

  const payload: WebhookPayload = { id: event.id, event: event.type, createdAt: event.occurredAt, data: event.data };
  const body = JSON.stringify(payload);
  const created: DueDelivery[] = [];
  for (const endpointId of endpointIds) {
    const now = new Date();
    const delivery = { _id: deliveryIdOf(event.id, endpointId), programId: event.programId, endpointId };
    const dueAt = new Date(now.getTime() + withJitter(settings.retryScheduleMs[0] ?? 0));
    // Scheduled first: a crash between the two writes leaves an entry whose delivery the
    // redelivered event creates (or, if it never comes, an entry the sender discards).
    await repositories.schedule.ensure(delivery, dueAt);
    const stored = await repositories.deliveries.insert({
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
    if (stored) created.push(delivery); // else a redelivered event: this delivery exists already
  }
  return created;
}
