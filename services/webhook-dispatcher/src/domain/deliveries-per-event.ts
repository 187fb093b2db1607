import { PUBLIC_EVENT_TYPES } from '@affiliate/contracts';
import { badRequest } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';

/** Whether subscriptions (types, family wildcards such as `sale.*`, `*`) take an event type. */
function takes(subscriptions: string[], eventType: string): boolean {
  return subscriptions.some(
    (subscription) => subscription === '*' || subscription === eventType || subscription === `${eventType.split('.')[0]}.*`,
  );
}

/**
 * Deliveries per event (issue 27): an event of any type reaches at most `maxDeliveriesPerEvent`
 * active endpoints of its program. Every delivery is two writes and a signed request, so without it
 * the operator's endpoint cap (up to 100) would be the only bound on what one event costs, and one
 * program could point every endpoint at the same URL. The endpoint being made or changed, with
 * `subscriptions` and `active`, is judged with the program's other active endpoints; a change that
 * would pass the limit is a 400 naming it and the event type.
 */
export async function assertDeliveriesPerEventWithin(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  endpoint: { id: string | null; subscriptions: string[]; active: boolean },
): Promise<void> {
  if (!endpoint.active) return;
  const others = await repositories.endpoints.activeSubscriptions(programId, endpoint.id);
  const max = settings.maxDeliveriesPerEvent;
  for (const eventType of PUBLIC_EVENT_TYPES) {
    if (!takes(endpoint.subscriptions, eventType)) continue;
    const reached = 1 + others.filter((subscriptions) => takes(subscriptions, eventType)).length;
    if (reached > max) {
      throw badRequest(
        `An event of type ${eventType} would be delivered to ${reached} active endpoints of this program, beyond the limit of ${max} deliveries per event (WEBHOOK_MAX_DELIVERIES_PER_EVENT): subscribe fewer endpoints to it or disable one`,
        'limit_reached',
      );
    }
  }
}
