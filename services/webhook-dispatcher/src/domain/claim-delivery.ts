import { randomUUID } from 'node:crypto';
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
 * Takes a due delivery with a lease, in one atomic update: two replicas, or a restarted process and
 * a lease that has not run out, never send the same attempt twice. A sender that dies leaves the
 * lease to expire, and the delivery is taken again. Null when someone else took it first.
 */
export async function claimDueDelivery(models: Models, deliveryId: string, leaseMs: number): Promise<ClaimedDelivery | null> {
  const now = new Date();
  const lockToken = randomUUID();
  return (await models.deliveries.findOneAndUpdate(
    { _id: deliveryId, status: 'pending', nextAttemptAt: { $lte: now }, lockedUntil: { $lte: now } },
    { $set: { lockedUntil: new Date(now.getTime() + leaseMs), lockToken } },
    { returnDocument: 'after', lean: true },
  )) as ClaimedDelivery | null;
}

/** Takes one delivery of the program for a send outside the schedule; null if someone holds it. */
export async function claimDelivery(models: Models, programId: string, deliveryId: string, leaseMs: number): Promise<ClaimedDelivery | null> {
  const now = new Date();
  const lockToken = randomUUID();
  return (await models.deliveries.findOneAndUpdate(
    { _id: deliveryId, programId, lockedUntil: { $lte: now } },
    { $set: { lockedUntil: new Date(now.getTime() + leaseMs), lockToken } },
    { returnDocument: 'after', lean: true },
  )) as ClaimedDelivery | null;
}
