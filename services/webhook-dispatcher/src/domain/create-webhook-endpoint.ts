import { randomUUID } from 'node:crypto';
import type { CreateWebhookEndpointBody, WebhookEndpoint } from '@affiliate/contracts';
import type { z } from 'zod';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { toWebhookEndpoint, type WebhookEndpointDocument } from '../data-access/webhook-endpoints';
import { newSigningSecret } from './signing';
import { assertDeliverableUrl } from './subscriber-address';

/** Each subscription once, in the order given. */
export const distinct = (eventTypes: string[]) => [...new Set(eventTypes)];

export async function createWebhookEndpoint(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  body: z.infer<typeof CreateWebhookEndpointBody>,
): Promise<WebhookEndpoint> {
  await assertDeliverableUrl(body.url, settings.allowPrivateUrls);
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
    createdAt: now,
    updatedAt: now,
  };
  await repositories.endpoints.insert(endpoint);
  return toWebhookEndpoint(endpoint, { withSecret: true });
}
