import { randomUUID } from 'node:crypto';
import type { FilterQuery } from 'mongoose';
import type { Models } from '../data-access/models';
import type { WebhookDeliveryDocument } from '../data-access/webhook-deliveries';

export type ClaimedDelivery = WebhookDeliveryDocument & { lockToken: string };

export type DueDelivery = { _id: string; endpointId: string };

/**
 * The most overdue deliveries that nobody holds, oldest first: one query per batch rather than one
 * scan of the pending deliveries per attempt, which is what limited throughput with a large backlog.
 */
export async function findDueDeliveries(models: Models, busyEndpoints: string[], limit: number): Promise<DueDelivery[]> {
  const now = new Date();
  return (await models.deliveries
    .find({
      status: 'pending',
      nextAttemptAt: { $lte: now },
      lockedUntil: { $lte: now },
      ...(busyEndpoints.length > 0 ? { endpointId: { $nin: busyEndpoints } } : {}),
    })
    .sort({ nextAttemptAt: 1 })
    .limit(limit)
    .select({ _id: 1, endpointId: 1 })
    .lean()) as DueDelivery[];
}

/**
 * Takes a due delivery with a lease, in one conditional update: two replicas, or a restarted process
 * and a lease that has not run out, never send the same attempt twice. A sender that dies leaves the
 * lease to expire, and the delivery is taken again. Null when someone else took it first.
 */
export async function claimDueDelivery(models: Models, deliveryId: string, leaseMs: number): Promise<ClaimedDelivery | null> {
  const now = new Date();
  return takeLease(models, { _id: deliveryId, status: 'pending', nextAttemptAt: { $lte: now }, lockedUntil: { $lte: now } }, now, leaseMs);
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
