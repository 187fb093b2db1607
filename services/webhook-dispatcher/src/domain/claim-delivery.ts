import { randomUUID } from 'node:crypto';
import { isDuplicateKey } from '@affiliate/platform';
import type { FilterQuery } from 'mongoose';
import type { Models } from '../data-access/models';
import type { WebhookDeliveryDocument } from '../data-access/webhook-deliveries';

export type ClaimedDelivery = WebhookDeliveryDocument & { lockToken: string };

/** A delivery to attempt: pushed by the fan-out, or found due in the schedule. */
export type DueDelivery = { _id: string; programId: string; endpointId: string };

/**
 * The most overdue scheduled attempts, oldest first. Reads the schedule, which holds only pending
 * deliveries, so its cost does not grow with the delivery log.
 */
export async function findDueDeliveries(models: Models, limit: number): Promise<DueDelivery[]> {
  return models.schedule.find({ dueAt: { $lte: new Date() } }).sort({ dueAt: 1 }).limit(limit).lean();
}

/** Puts a pending delivery on the schedule (or moves it), so that a crash never strands it. */
export async function scheduleDelivery(models: Models, delivery: DueDelivery, dueAt: Date): Promise<void> {
  await models.schedule.updateOne(
    { _id: delivery._id },
    { $set: { dueAt }, $setOnInsert: { programId: delivery.programId, endpointId: delivery.endpointId } },
    { upsert: true },
  );
}

/** Puts a new delivery on the schedule unless it is there already (a redelivered event changes nothing). */
export async function ensureScheduled(models: Models, delivery: DueDelivery, dueAt: Date): Promise<void> {
  try {
    await models.schedule.updateOne(
      { _id: delivery._id },
      { $setOnInsert: { programId: delivery.programId, endpointId: delivery.endpointId, dueAt } },
      { upsert: true },
    );
  } catch (error) {
    if (!isDuplicateKey(error)) throw error; // a simultaneous copy of the event inserted it
  }
}

/** A delivery that succeeded or failed for good leaves the schedule. */
export async function unscheduleDelivery(models: Models, deliveryId: string): Promise<void> {
  await models.schedule.deleteOne({ _id: deliveryId });
}

/**
 * Takes a due delivery with a lease, by _id: two replicas, or a restarted process and a lease that
 * has not run out, never send the same attempt twice. Its schedule entry moves to the end of the
 * lease, so a sender that dies leaves it to come due again. Null when someone else holds it, when it
 * is no longer pending (its stale schedule entry is then removed), or when it is not stored yet.
 */
export async function claimDueDelivery(models: Models, delivery: DueDelivery, leaseMs: number): Promise<ClaimedDelivery | null> {
  const now = new Date();
  const claimed = await takeLease(models, { _id: delivery._id, status: 'pending', nextAttemptAt: { $lte: now }, lockedUntil: { $lte: now } }, now, leaseMs);
  if (claimed) {
    await models.schedule.updateOne({ _id: delivery._id }, { $set: { dueAt: claimed.lockedUntil } });
    return claimed;
  }
  // Ended for good (succeeded, failed): its entry is stale. Not yet written (the fan-out schedules
  // before it stores the delivery): the entry stays, and the delivery is taken on a later look.
  const current = await models.deliveries.findOne({ _id: delivery._id }).select('status').lean();
  if (current && current.status !== 'pending') await unscheduleDelivery(models, delivery._id);
  return null;
}

/** Takes one delivery of the program for a send outside the schedule; null if someone holds it. */
export async function claimDelivery(models: Models, programId: string, deliveryId: string, leaseMs: number): Promise<ClaimedDelivery | null> {
  const now = new Date();
  return takeLease(models, { _id: deliveryId, programId, lockedUntil: { $lte: now } }, now, leaseMs);
}

/**
 * The verdict is the conditional update's modifiedCount, which the server reports exactly; the
 * document is then read by _id and must carry our token. The document findOneAndUpdate returns is
 * not used: the local server may hand back another caller's later state (DESIGN.md section 8).
 */
async function takeLease(models: Models, filter: FilterQuery<WebhookDeliveryDocument>, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
  const lockToken = randomUUID();
  const taken = await models.deliveries.updateOne(filter, { $set: { lockedUntil: new Date(now.getTime() + leaseMs), lockToken } });
  if (taken.modifiedCount !== 1) return null;
  const claimed = await models.deliveries.findOne({ _id: filter._id }).lean();
  return claimed?.lockToken === lockToken ? (claimed as ClaimedDelivery) : null;
}
