import { PUBLIC_EVENT_TYPES } from '@affiliate/contracts';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import type { BackfillDocument } from '../data-access/webhook-backfills';
import type { WebhookEndpointDocument } from '../data-access/webhook-endpoints';
import { queueStoredEvent, retentionStart, typesSubscribed } from './queue-stored-event';

/** Events one backfill queues per turn: bounded work, and every backfill in progress gets a turn. */
export const BACKFILL_PAGE_SIZE = 100;
/** Backfills in progress worked on per turn, oldest first. */
const BACKFILLS_PER_TURN = 20;

/**
 * `backfillSince` on a new endpoint: the stored events from then (never before the retention) to
 * its creation, of the types it subscribed to, are queued in the background. Later events reach it
 * by the fan-out; one that both reach is one delivery (its id is the event's and endpoint's).
 */
export async function startBackfill(
  repositories: Repositories,
  settings: DispatcherSettings,
  endpoint: WebhookEndpointDocument,
  backfillSince: Date,
): Promise<void> {
  const oldest = retentionStart(settings, endpoint.createdAt);
  await repositories.backfills.start({
    _id: endpoint._id,
    programId: endpoint.programId,
    eventTypes: typesSubscribed(endpoint.eventTypes, PUBLIC_EVENT_TYPES),
    since: backfillSince > oldest ? backfillSince : oldest,
    until: endpoint.createdAt,
    cursor: null,
    createdAt: endpoint.createdAt,
  });
}

/**
 * One turn of every backfill in progress: the next page of its events, oldest first, queued, then
 * the cursor moved past them. A crash before the cursor moves queues that page again on the next
 * turn, which makes no second delivery. Answers how many deliveries were queued.
 */
export async function continueBackfills(repositories: Repositories, settings: DispatcherSettings): Promise<number> {
  let queued = 0;
  for (const backfill of await repositories.backfills.inProgressAcrossPrograms(BACKFILLS_PER_TURN)) {
    queued += await continueBackfill(repositories, settings, backfill);
  }
  return queued;
}

async function continueBackfill(repositories: Repositories, settings: DispatcherSettings, backfill: BackfillDocument): Promise<number> {
  const endpoint = await repositories.endpoints.byId(backfill.programId, backfill._id);
  // Deleted meanwhile: nothing to fill. Disabled: its deliveries would only fail; enabling it later does not resume the backfill.
  if (!endpoint || !endpoint.active) {
    await repositories.backfills.finish(backfill.programId, backfill._id);
    return 0;
  }
  const events = await repositories.events.oldestFirst(
    backfill.programId,
    { types: backfill.eventTypes, since: backfill.since, before: backfill.until },
    backfill.cursor,
    BACKFILL_PAGE_SIZE,
  );
  let queued = 0;
  for (const event of events) {
    if (await queueStoredEvent(repositories, settings, endpoint._id, event)) queued += 1;
  }
  const last = events[events.length - 1];
  if (events.length < BACKFILL_PAGE_SIZE || !last) await repositories.backfills.finish(backfill.programId, backfill._id);
  else await repositories.backfills.advance(backfill, { createdAt: last.createdAt, id: last._id });
  return queued;
}
