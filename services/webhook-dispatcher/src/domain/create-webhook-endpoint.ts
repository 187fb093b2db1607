import { randomUUID } from 'node:crypto';
import type { CreateWebhookEndpointBody, WebhookEndpoint } from '@affiliate/contracts';
import { badRequest } from '@affiliate/platform';
import type { z } from 'zod';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { toWebhookEndpoint, type WebhookEndpointDocument } from '../data-access/webhook-endpoints';
import { startBackfill } from './backfill-endpoint';
import { assertDeliveriesPerEventWithin } from './deliveries-per-event';
import { newSigningSecret } from './signing';
import { assertDeliverableUrl } from './subscriber-address';

/** Each subscription once, in the order given. */
export const distinct = (eventTypes: string[]) => [...new Set(eventTypes)];

/**
 * A new endpoint, within the program's cap (the operator's `maxWebhookEndpoints`): every endpoint
 * multiplies the writes and signed requests each event causes, so one program cannot fill the
 * dispatcher, or aim it at a URL, as many times as it likes. Its subscriptions must also keep
 * every event type within the deliveries per event (checked after the slot is taken, so that a
 * program at its endpoint cap is told about that cap).
 */
export async function createWebhookEndpoint(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  body: z.infer<typeof CreateWebhookEndpointBody>,
  limits: { maxWebhookEndpoints: number },
): Promise<WebhookEndpoint> {
  const backfillSince = body.backfillSince === undefined ? null : new Date(body.backfillSince);
  if (backfillSince && backfillSince > new Date())
    throw badRequest('backfillSince must not be in the future', 'parameter_invalid', 'backfillSince');
  await assertDeliverableUrl(body.url, settings.allowPrivateUrls);
  if (!(await repositories.endpoints.reserveSlot(programId, limits.maxWebhookEndpoints))) {
    throw badRequest(
      `This program has reached its limit of ${limits.maxWebhookEndpoints} webhook endpoints (maxWebhookEndpoints): delete one, subscribe an existing endpoint to more event types, or ask the operator to raise the limit`,
      'limit_reached',
    );
  }
  try {
    await assertDeliveriesPerEventWithin(repositories, settings, programId, {
      id: null,
      subscriptions: body.eventTypes,
      active: body.active,
    });
  } catch (error) {
    await repositories.endpoints.releaseSlot(programId);
    throw error;
  }
  const now = new Date();
  const endpoint: WebhookEndpointDocument = {
    _id: randomUUID(),
    programId,
    url: body.url,
    eventTypes: distinct(body.eventTypes),
    description: body.description ?? null,
    active: body.active,
    disabledReason: null,
    secret: newSigningSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    ordering: body.ordering,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await repositories.endpoints.insert(endpoint);
  } catch (error) {
    await repositories.endpoints.releaseSlot(programId);
    throw error;
  }
  // Queued in the background, page by page (the dispatcher's event-store tasks): the answer does not wait.
  if (backfillSince && endpoint.active) await startBackfill(repositories, settings, endpoint, backfillSince);
  return toWebhookEndpoint(endpoint, { withSecret: true });
}
