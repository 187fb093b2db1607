import { MAX_REPLAYED_EVENTS, PUBLIC_EVENT_TYPES, type ReplayDeliveriesBody } from '@affiliate/contracts';
import { badRequest, notFound } from '@affiliate/platform';
import type { z } from 'zod';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { queueStoredEvent, retentionStart, typesSubscribed } from './queue-stored-event';

/**
 * POST /webhook-deliveries/replay: the stored events of [since, until) go to the endpoint again,
 * with their original ids and bytes. An event it has received (a 2xx) is skipped unless
 * `includeSucceeded`; one still pending is on its way already; one it never had (it did not exist,
 * or did not subscribe, at the time) gets its first delivery. Unlike recover, which re-sends the
 * endpoint's failed deliveries, replay starts from the events. At most MAX_REPLAYED_EVENTS events.
 */
export async function replayDeliveries(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  request: z.infer<typeof ReplayDeliveriesBody>,
): Promise<{ queued: number }> {
  const since = new Date(request.since);
  const until = request.until === undefined ? new Date() : new Date(request.until);
  if (since >= until) throw badRequest('since must be before until', 'parameter_invalid', 'since');
  const endpoint = await repositories.endpoints.byId(programId, request.webhookEndpointId);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${request.webhookEndpointId}`);
  if (!endpoint.active)
    throw badRequest(
      'The endpoint is disabled: enable it (PUT /webhook-endpoints with active: true) first',
      'webhook_endpoint_unavailable',
    );

  const oldest = retentionStart(settings);
  // Filtering stays the endpoint's: eventTypes narrows its subscriptions, never widens them.
  const types = typesSubscribed(endpoint.eventTypes, request.eventTypes ?? PUBLIC_EVENT_TYPES);
  const window = { types, since: since > oldest ? since : oldest, before: until };
  // One read past the limit tells a window that is too wide, before anything is queued.
  const events = await repositories.events.oldestFirst(programId, window, null, MAX_REPLAYED_EVENTS + 1);
  if (events.length > MAX_REPLAYED_EVENTS) {
    throw badRequest(
      `The window holds more than ${MAX_REPLAYED_EVENTS} events: replay a shorter one (since, until) and then the next`,
      'limit_reached',
    );
  }
  const again = request.includeSucceeded ? (['failed', 'succeeded'] as const) : (['failed'] as const);
  let queued = 0;
  for (const event of events) {
    if (await queueStoredEvent(repositories, settings, endpoint._id, event, again)) queued += 1;
  }
  return { queued };
}
