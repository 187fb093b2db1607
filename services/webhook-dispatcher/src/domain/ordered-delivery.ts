import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import type { ClaimedDelivery, OrderedDelivery, WebhookDeliveryDocument } from '../data-access/webhook-deliveries';
import type { DueDelivery } from '../data-access/webhook-schedule';

/**
 * Shortest wait of a delivery held behind an earlier one that is due already or being sent: that
 * one's end wakes it at once (releaseNextOf, and the look holdBack takes after writing the hold), so
 * this only bounds the wait when the wake was lost (a crash between the end and the wake).
 */
const HELD_RECHECK_MS = 10_000;

const orderedOf = (delivery: Pick<WebhookDeliveryDocument, 'endpointId' | 'objectKey' | 'revision'>): OrderedDelivery | null =>
  delivery.objectKey === undefined || delivery.revision === undefined
    ? null
    : { endpointId: delivery.endpointId, objectKey: delivery.objectKey, revision: delivery.revision };

/**
 * A new delivery to a PER_OBJECT endpoint takes its place in its object's order, which is kept as
 * long as the events are (EVENT_RETENTION_DAYS) after the object's last delivery.
 */
export async function enterOrder(
  repositories: Repositories,
  settings: DispatcherSettings,
  delivery: WebhookDeliveryDocument,
): Promise<void> {
  const ordered = orderedOf(delivery);
  if (ordered) await repositories.objectOrders.arrived(delivery.programId, ordered, delivery._id, settings.eventRetentionMs);
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
export async function heldBackUntil(
  repositories: Repositories,
  settings: DispatcherSettings,
  delivery: WebhookDeliveryDocument,
  now = new Date(),
): Promise<Date | null> {
  const ordered = orderedOf(delivery);
  if (!ordered) return null;
  const order = await repositories.objectOrders.of(delivery.programId, ordered);
  const earlier = (order?.pending ?? []).filter((entry) => entry.revision < ordered.revision).sort((a, b) => a.revision - b.revision);
  for (const entry of earlier) {
    const blocking = await repositories.deliveries.byId(delivery.programId, entry.deliveryId);
    if (blocking?.status === 'pending') {
      // Until the earlier one's next attempt, however far (a retry hours away): nothing before it can
      // end it but a re-send or the endpoint's end, and its end wakes this one at once. A look earlier
      // would find it pending still, at the cost of a claim and an endpoint slot each time.
      const blockerNext = Math.max(blocking.nextAttemptAt?.getTime() ?? 0, blocking.lockedUntil.getTime());
      return new Date(Math.max(blockerNext, now.getTime() + HELD_RECHECK_MS));
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
 * retry schedule (no attempt is counted) and its lease is given back. True when it is due again at
 * once: what held it back ended while it was being looked at.
 *
 * That end's wake-up (releaseNextOf) finds the delivery leased by this look and cannot make it due,
 * so once the hold is written (the lease given back), the order is read again: either this read sees
 * the earlier delivery ended (or the missing revision arrived), or that end came after this hold was
 * written, and its wake-up finds the delivery free. Either way it is not left waiting until `until`.
 */
export async function holdBack(
  repositories: Repositories,
  settings: DispatcherSettings,
  delivery: ClaimedDelivery,
  until: Date,
): Promise<boolean> {
  if (
    !(await repositories.deliveries.recordHeld(delivery, {
      nextAttemptAt: until,
      lockedUntil: new Date(0),
      lockToken: null,
      updatedAt: new Date(),
    }))
  )
    return false;
  await repositories.schedule.schedule(delivery, until);
  if (await heldBackUntil(repositories, settings, delivery)) return false;
  return makeDueNow(repositories, delivery);
}

/** A pending delivery nobody holds is due now, in its record and on the schedule; false when it is held or has ended. */
async function makeDueNow(repositories: Repositories, delivery: DueDelivery): Promise<boolean> {
  const now = new Date();
  if (!(await repositories.deliveries.dueNow(delivery.programId, delivery._id, now))) return false;
  await repositories.schedule.schedule(delivery, now);
  return true;
}

/**
 * An ordered delivery ended (delivered or failed for good): the next revision of its object goes now.
 * Answers that delivery when it made it due (the scheduler then takes it at once), else null.
 */
export async function releaseNextOf(repositories: Repositories, delivery: WebhookDeliveryDocument): Promise<DueDelivery | null> {
  const ordered = orderedOf(delivery);
  if (!ordered) return null;
  const order = await repositories.objectOrders.ended(delivery.programId, ordered);
  const later = (order?.pending ?? []).filter((entry) => entry.revision > ordered.revision).sort((a, b) => a.revision - b.revision);
  const next = later[0];
  if (!next) return null;
  const released = { _id: next.deliveryId, programId: delivery.programId, endpointId: delivery.endpointId };
  return (await makeDueNow(repositories, released)) ? released : null;
}
