import { conflict, notFound } from '@affiliate/platform';
import type { UpdateWebhookEndpointBody, WebhookEndpoint } from '@affiliate/contracts';
import type { z } from 'zod';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { toWebhookEndpoint, type WebhookEndpointDocument } from '../data-access/webhook-endpoints';
import { distinct } from './create-webhook-endpoint';
import { assertDeliveriesPerEventWithin } from './deliveries-per-event';
import { newSigningSecret } from './signing';
import { assertDeliverableUrl } from './subscriber-address';

/**
 * Changes an endpoint. A rotation makes a new secret and keeps the old one signing next to it for the
 * overlap, so subscribers can switch without losing a message; the new secret is in the answer.
 * Turning an endpoint back on clears why it was disabled and starts its failure count afresh.
 */
export async function updateWebhookEndpoint(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  body: z.infer<typeof UpdateWebhookEndpointBody>,
): Promise<WebhookEndpoint> {
  const current = await repositories.endpoints.byId(programId, body.webhookEndpointId);
  if (!current) throw notFound(`No webhook endpoint with id ${body.webhookEndpointId}`);
  if (body.url !== undefined) await assertDeliverableUrl(body.url, settings.allowPrivateUrls);

  const now = new Date();
  const set: Partial<WebhookEndpointDocument> = { updatedAt: now };
  if (body.url !== undefined) set.url = body.url;
  if (body.eventTypes !== undefined) set.eventTypes = distinct(body.eventTypes);
  if (body.description !== undefined) set.description = body.description;
  // Deliveries already stored keep the order they were stored with; the new setting applies to new events.
  if (body.ordering !== undefined) set.ordering = body.ordering;
  if (body.active !== undefined) {
    set.active = body.active;
    if (body.active && !current.active) Object.assign(set, { disabledReason: null, failingSince: null });
  }
  // More subscriptions, or an endpoint turned back on, must keep every event type within the deliveries per event.
  if (set.eventTypes !== undefined || (set.active && !current.active)) {
    await assertDeliveriesPerEventWithin(repositories, settings, programId, {
      id: current._id,
      subscriptions: set.eventTypes ?? current.eventTypes,
      active: set.active ?? current.active,
    });
  }
  if (body.rotateSecret) {
    Object.assign(set, {
      secret: newSigningSecret(),
      previousSecret: current.secret,
      previousSecretExpiresAt: new Date(now.getTime() + settings.secretOverlapMs),
    });
  }
  const updated = await repositories.endpoints.changeIfSecretIs(programId, current._id, current.secret, set);
  if (!updated) throw conflict('The webhook endpoint is being changed by another request right now; retry', 'concurrent_modification');
  return toWebhookEndpoint(updated, { withSecret: body.rotateSecret === true });
}
