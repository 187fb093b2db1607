import type { WebhookEndpoint } from '@affiliate/contracts';
import { notFound, type PageRequest } from '@affiliate/platform';
import type { Repositories } from '../data-access/repositories';
import { toWebhookEndpoint } from '../data-access/webhook-endpoints';

export async function findWebhookEndpoint(repositories: Repositories, programId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await repositories.endpoints.byId(programId, id);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${id}`);
  return toWebhookEndpoint(endpoint);
}

export async function listWebhookEndpoints(repositories: Repositories, programId: string, page: PageRequest): Promise<{ items: WebhookEndpoint[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.endpoints.list(programId, page);
  return { items: items.map((endpoint) => toWebhookEndpoint(endpoint)), nextCursor };
}
