import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import type { ClaimedDelivery, OrderedDelivery, WebhookDeliveryDocument } from '../data-access/webhook-deliveries';

/**
 * Longest a delivery held behind an earlier pending one waits before looking again, whatever that
 * one's retry schedule says: the earlier one ending wakes it at once (releaseNextOf), and this bounds
 * the wait when that wake was missed (it was being looked at by another replica, or a crash).
 */
const HELD_RECHECK_MS = 10_000;

const orderedOf = (delivery: Pick<WebhookDeliveryDocument, 'endpointId' | 'objectKey' | 'revision'>): OrderedDelivery | null =>
  delivery.objectKey === undefined || delivery.revision === undefined ? null : { endpointId: delivery.endpointId, objectKey: delivery.objectKey, revision: delivery.revision };

/** A new delivery to a PER_OBJECT endpoint takes its place in its object's order. */
export async function enterOrder(repositories: Repositories, delivery: WebhookDeliveryDocument): Promise<void> {
  const ordered = orderedOf(delivery);
  if (ordered) await repositories.objectOrders.arrived(delivery.programId, ordered, delivery._id);
}

/**
 * Ordered delivery (an endpoint with ordering PER_OBJECT), as Svix's FIFO endpoints: a delivery goes
 * out only after every earlier revision of its object to the endpoint has ended, delivered or failed
 * for good. Answers when to look again, or null when it may go now. Point reads only: the object's
 * order by its key, and the delivery holding it back by its id.
 *
 * Events reach the dispatcher in any order (relays of several replicas publish side by side), so an
 * earlier revision may not be here yet: a delivery whose predecessor (one revision lower) the
 * endpoint has not seen waits up to `orderingGapWaitMs` from its own arrival, then goes. Revisions
 * have gaps that never fill (a change that announces no event, a type the endpoint does not take),
 * so the wait is bounded; a revision that turns up after it is delivered late, its revision telling
 * the subscriber that it is older than what it has.
 */
export async function heldBackUntil(repositories: Repositories, settings: DispatcherSettings, delivery: WebhookDeliveryDocument, now = new Date()): Promise<Date | null> {
  const ordered = orderedOf(delivery);
  if (!ordered) return null;
  const order = await repositories.objectOrders.of(delivery.programId, ordered);
  const earlier = (order?.pending ?? []).filter((entry) => entry.revision < ordered.revision).sort((a, b) => a.revision - b.revision);
  for (const entry of earlier) {
    const blocking = await repositories.deliveries.byId(delivery.programId, entry.deliveryId);
    if (blocking?.status === 'pending') {
      // Not before the earlier one's own next attempt can have ended it; never longer than the recheck.
      const earliest = Math.max(now.getTime() + settings.pollIntervalMs, blocking.nextAttemptAt?.getTime() ?? 0, blocking.lockedUntil.getTime());
      return new Date(Math.min(earliest, now.getTime() + HELD_RECHECK_MS));
    }
    // Ended, but a crash came before the order heard of it: it holds nothing back any more.
    await repositories.objectOrders.ended(delivery.programId, { ...ordered, revision: entry.revision });
  }
  const before = Math.max(-1, ...(order?.seen ?? []).filter((revision) => revision < ordered.revision));
  if (before === ordered.revision - 1) return null;
  const gapEnds = delivery.createdAt.getTime() + settings.orderingGapWaitMs;
  return gapEnds > now.getTime() ? new Date(gapEnds) : null;
}

/**
 * Puts a claimed delivery back on the schedule, untried, until `until`: it keeps its place in the
 * retry schedule (no attempt is counted) and its lease is given back.
 */
export async function holdBack(repositories: Repositories, delivery: ClaimedDelivery, until: Date): Promise<void> {
  if (await repositories.deliveries.recordHeld(delivery, { nextAttemptAt: until, lockedUntil: new Date(0), lockToken: null, updatedAt: new Date() })) {
    await repositories.schedule.schedule(delivery, until);
  }
}

/** An ordered delivery ended (delivered or failed for good): the next revision of its object goes now. */
export async function releaseNextOf(repositories: Repositories, delivery: WebhookDeliveryDocument): Promise<void> {
  const ordered = orderedOf(delivery);
  if (!ordered) return;
  const order = await repositories.objectOrders.ended(delivery.programId, ordered);
  const later = (order?.pending ?? []).filter((entry) => entry.revision > ordered.revision).sort((a, b) => a.revision - b.revision);
  const next = later[0];
  const now = new Date();
  if (next && (await repositories.deliveries.dueNow(delivery.programId, next.deliveryId, now))) {
    await repositories.schedule.schedule({ _id: next.deliveryId, programId: delivery.programId, endpointId: delivery.endpointId }, now);
  }
}
