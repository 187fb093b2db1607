import type { WebhookEndpoint } from '@affiliate/contracts';
import { findPage, notFound, type PageRequest } from '@affiliate/platform';
import type { Models } from '../data-access/models';
import { toWebhookEndpoint, type WebhookEndpointDocument } from '../data-access/webhook-endpoints';

export async function findWebhookEndpoint(models: Models, programId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await models.endpoints.findOne({ _id: id, programId }).lean();
  if (!endpoint) throw notFound(`No webhook endpoint with id ${id}`);
  return toWebhookEndpoint(endpoint);
}

export async function listWebhookEndpoints(models: Models, programId: string, page: PageRequest): Promise<{ items: WebhookEndpoint[]; nextCursor: string | null }> {
  const { items, nextCursor } = await findPage<WebhookEndpointDocument>(models.endpoints, { programId }, page);
  return { items: items.map((endpoint) => toWebhookEndpoint(endpoint)), nextCursor };
}
