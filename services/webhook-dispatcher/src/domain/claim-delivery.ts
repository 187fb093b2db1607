import type { Repositories } from '../data-access/repositories';
import type { ClaimedDelivery } from '../data-access/webhook-deliveries';
import type { DueDelivery, ScheduleBacklog } from '../data-access/webhook-schedule';

export type { ClaimedDelivery, DueDelivery, ScheduleBacklog };

/** Deliveries due and not being sent by any replica, and the oldest: the backlog gauges. */
export function findBacklog(repositories: Repositories): Promise<ScheduleBacklog> {
  return repositories.schedule.backlogAcrossPrograms();
}

/** A new delivery leased by the fan-out starts its first attempt: it no longer waits. */
export async function startLeasedDelivery(repositories: Repositories, delivery: DueDelivery): Promise<void> {
  await repositories.schedule.sending(delivery);
}

/** What the schedule says is due now, across programs (the scheduler takes programs in turn). */
export async function findDueDeliveries(repositories: Repositories, limit: number): Promise<DueDelivery[]> {
  return repositories.schedule.dueAcrossPrograms(limit);
}

/**
 * Leases a due delivery for its scheduled attempt, and pushes its schedule entry to the end of the
 * lease, so a sender that crashes mid-attempt leaves it to be found again then.
 */
export async function claimDueDelivery(
  repositories: Repositories,
  delivery: DueDelivery,
  leaseMs: number,
): Promise<ClaimedDelivery | null> {
  const claimed = await repositories.deliveries.leaseDue(delivery.programId, delivery._id, leaseMs);
  if (claimed) {
    await repositories.schedule.schedule(delivery, claimed.lockedUntil);
    return claimed;
  }
  // Ended for good (succeeded, failed): its entry is stale, and goes unless it changed since it was
  // read (a recover made it pending again). Not yet written (the fan-out schedules before it stores
  // the delivery): the entry stays, and the delivery is taken on a later look. A delivery the fan-out
  // pushed here was not read from the schedule: its entry is left to the look that reads it.
  const current = await repositories.deliveries.byId(delivery.programId, delivery._id);
  if (current && current.status !== 'pending' && delivery.dueAt)
    await repositories.schedule.unschedule(delivery.programId, delivery._id, [delivery.dueAt]);
  return null;
}

/** Leases any delivery of the program that nobody is sending right now (a manual re-send). */
export async function claimDelivery(
  repositories: Repositories,
  programId: string,
  deliveryId: string,
  leaseMs: number,
): Promise<ClaimedDelivery | null> {
  return repositories.deliveries.leaseAny(programId, deliveryId, leaseMs);
}
