import type { EventQuery, WebhookPayload } from '@affiliate/contracts';
import { notFound, periodOf } from '@affiliate/platform';
import type { z } from 'zod';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import type { StoredEventDocument } from '../data-access/webhook-events';
import { retentionStart } from './queue-stored-event';

/** The body its subscribers received, as they received it (the same fields whatever the envelope holds). */
const toEvent = (event: StoredEventDocument): WebhookPayload => JSON.parse(event.body) as WebhookPayload;

/** GET /events?id=: one event of the retention period, by its id (the webhook-id of its deliveries). */
export async function findEvent(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  id: string,
): Promise<WebhookPayload> {
  const event = await repositories.events.byId(programId, id);
  // Past the retention it is gone, even if the sweep has not come by yet.
  if (!event || event.createdAt < retentionStart(settings)) throw notFound(`No event with id ${id}`);
  return toEvent(event);
}

/** GET /events: the program's events of the retention period, newest first, within the filters. */
export async function listEvents(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  query: z.infer<typeof EventQuery>,
): Promise<{ items: WebhookPayload[]; nextCursor: string | null }> {
  // The same rule as every list: a reversed period is a 400, an empty one (gte = lt) an empty list.
  const { gte, lt } = periodOf(query, 'createdAt') ?? {};
  const oldest = retentionStart(settings);
  const since = gte && gte > oldest ? gte : oldest;
  const { items, nextCursor } = await repositories.events.list(
    programId,
    { type: query.type, objectId: query.objectId, since, before: lt },
    query,
  );
  return { items: items.map(toEvent), nextCursor };
}
