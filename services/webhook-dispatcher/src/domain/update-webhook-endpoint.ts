import { conflict, notFound } from '@affiliate/platform';
import type { UpdateWebhookEndpointBody, WebhookEndpoint } from '@affiliate/contracts';
import type { z } from 'zod';
import type { DispatcherSettings } from '../config';
import type { Models } from '../data-access/models';
import { toWebhookEndpoint, type WebhookEndpointDocument } from '../data-access/webhook-endpoints';
import { distinct } from './create-webhook-endpoint';
import { newSigningSecret } from './signing';
import { assertDeliverableUrl } from './subscriber-address';

/**
 * Changes an endpoint. A rotation makes a new secret and keeps the old one signing next to it for the
 * overlap, so subscribers can switch without losing a message; the new secret is in the answer.
 * Turning an endpoint back on clears why it was disabled and starts its failure count afresh.
 */
export async function updateWebhookEndpoint(
  models: Models,
  settings: DispatcherSettings,
  programId: string,
  body: z.infer<typeof UpdateWebhookEndpointBody>,
): Promise<WebhookEndpoint> {
  const current = await models.endpoints.findOne({ _id: body.webhookEndpointId, programId }).lean();
  if (!current) throw notFound(`No webhook endpoint with id ${body.webhookEndpointId}`);
  if (body.url !== undefined) await assertDeliverableUrl(body.url, settings.allowPrivateUrls);

  const now = new Date();
  const set: Partial<WebhookEndpointDocument> = { updatedAt: now };
  if (body.url !== undefined) set.url = body.url;
  if (body.eventTypes !== undefined) set.eventTypes = distinct(body.eventTypes);
  if (body.description !== undefined) set.description = body.description;
  if (body.active !== undefined) {
    set.active = body.active;
    if (body.active && !current.active) Object.assign(set, { disabledReason: null, failingSince: null });
  }
  if (body.rotateSecret) {
    Object.assign(set, {
      secret: newSigningSecret(),
      previousSecret: current.secret,
      previousSecretExpiresAt: new Date(now.getTime() + settings.secretOverlapMs),
    });
  }
  // Conditional on the secret read: two rotations at once must not both believe they made the current one.
  const changed = await models.endpoints.updateOne({ _id: current._id, programId, secret: current.secret }, { $set: set });
  // Read back by _id rather than trusting a findOneAndUpdate result (DESIGN.md section 8).
  const updated = changed.matchedCount === 1 ? await models.endpoints.findOne({ _id: current._id, programId }).lean() : null;
  if (!updated) throw conflict('The webhook endpoint is being changed by another request right now; retry');
  return toWebhookEndpoint(updated, { withSecret: body.rotateSecret === true });
}
