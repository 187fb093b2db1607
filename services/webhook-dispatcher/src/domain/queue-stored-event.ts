import type { DeliveryStatus } from '@affiliate/contracts';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { deliveryIdOf, type WebhookDeliveryDocument } from '../data-access/webhook-deliveries';
import type { StoredEventDocument } from '../data-access/webhook-events';
import { withJitter } from './retry-schedule';

/**
 * Puts a stored event on the schedule for one endpoint, with its original id and bytes. The
 * delivery's id is the (event, endpoint) pair's, so queuing the same event twice (a resumed
 * backfill, two replicas, a replay racing the fan-out) makes one delivery. An existing delivery
 * goes back to pending only if it ended in one of `again` (a replay); true when one was queued.
 */
export async function queueStoredEvent(
  repositories: Repositories,
  settings: DispatcherSettings,
  endpointId: string,
  event: StoredEventDocument,
  again: readonly DeliveryStatus[] = [],
): Promise<boolean> {
  const now = new Date();
  const dueAt = new Date(now.getTime() + withJitter(settings.retryScheduleMs[0] ?? 0));
  const delivery = { _id: deliveryIdOf(event._id, endpointId), programId: event.programId, endpointId };
  const existing = await repositories.deliveries.byId(event.programId, delivery._id);
  if (existing) {
    if (!(await repositories.deliveries.requeueEnded(event.programId, delivery._id, again, dueAt))) return false;
    await repositories.schedule.schedule(delivery, dueAt);
    return true;
  }
  // Scheduled first, as the fan-out does: a crash between the two writes leaves an entry the
  // resumed walk completes (or that the sender discards), never a pending delivery nobody sends.
  await repositories.schedule.schedule(delivery, dueAt);
  const stored: WebhookDeliveryDocument = {
    ...delivery,
    eventId: event._id,
    eventType: event.type,
    body: event.body,
    status: 'pending',
    attempts: [],
    scheduledAttempts: 0,
    nextAttemptAt: dueAt,
    lockedUntil: now,
    lockToken: null,
    createdAt: now,
    updatedAt: now,
  };
  return repositories.deliveries.insert(stored);
}

/** The concrete public event types a list of subscriptions (`sale.created`, `sale.*`, `*`) takes. */
export function typesSubscribed(subscriptions: readonly string[], types: readonly string[]): string[] {
  return types.filter((type) =>
    subscriptions.some((subscription) => subscription === '*' || subscription === type || subscription === `${type.split('.')[0]}.*`),
  );
}

/** The oldest instant still within the retention. */
export function retentionStart(settings: DispatcherSettings, now = new Date()): Date {
  return new Date(now.getTime() - settings.eventRetentionMs);
}
