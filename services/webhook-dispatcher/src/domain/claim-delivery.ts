import { randomUUID } from 'node:crypto';
import type { Models } from '../data-access/models';
import type { WebhookDeliveryDocument } from '../data-access/webhook-deliveries';

export type ClaimedDelivery = WebhookDeliveryDocument & { lockToken: string };

/**
 * Takes the most overdue delivery with a lease, in one atomic update: two replicas, or a restarted
 * process and a lease that has not run out, never send the same attempt twice. A sender that dies
 * leaves the lease to expire, and the delivery is taken again.
 */
export async function claimDueDelivery(models: Models, busyEndpoints: string[], leaseMs: number): Promise<ClaimedDelivery | null> {
  const now = new Date();
  const lockToken = randomUUID();
  return (await models.deliveries.findOneAndUpdate(
    {
      status: 'pending',
      nextAttemptAt: { $lte: now },
      lockedUntil: { $lte: now },
      ...(busyEndpoints.length > 0 ? { endpointId: { $nin: busyEndpoints } } : {}),
    },
    { $set: { lockedUntil: new Date(now.getTime() + leaseMs), lockToken } },
    { sort: { nextAttemptAt: 1 }, returnDocument: 'after', lean: true },
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
