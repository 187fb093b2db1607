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

/**
 * Ordered delivery (an endpoint with ordering PER_OBJECT), as Svix's FIFO endpoints: a delivery goes
 * out only after every earlier revision of its object to the endpoint has ended, delivered or failed
 * for good. Answers when to look again, or null when it may go now.
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
  const blocking = await repositories.deliveries.earliestPending(delivery.programId, ordered, 'before');
  if (blocking) {
    // Not before the earlier one's own next attempt can have ended it; never longer than the recheck.
    const earliest = Math.max(now.getTime() + settings.pollIntervalMs, blocking.nextAttemptAt?.getTime() ?? 0, blocking.lockedUntil.getTime());
    return new Date(Math.min(earliest, now.getTime() + HELD_RECHECK_MS));
  }
  const before = await repositories.deliveries.revisionBefore(delivery.programId, ordered);
  if (before === null ? ordered.revision === 0 : before === ordered.revision - 1) return null;
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
  const next = await repositories.deliveries.earliestPending(delivery.programId, ordered, 'after');
  const now = new Date();
  if (next && (await repositories.deliveries.dueNow(next.programId, next._id, now))) await repositories.schedule.schedule(next, now);
}
