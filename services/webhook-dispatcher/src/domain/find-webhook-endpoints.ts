import type { WebhookEndpoint, WebhookSecret } from '@affiliate/contracts';
import { notFound, type PageRequest } from '@affiliate/platform';
import type { Repositories } from '../data-access/repositories';
import { overlapEndOf, toWebhookEndpoint } from '../data-access/webhook-endpoints';

export async function findWebhookEndpoint(repositories: Repositories, programId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await repositories.endpoints.byId(programId, id);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${id}`);
  return toWebhookEndpoint(endpoint);
}

/** The signing secret of one endpoint, for a program team that lost it (reads of the endpoint never show it). */
export async function revealWebhookSecret(repositories: Repositories, programId: string, id: string): Promise<WebhookSecret> {
  const endpoint = await repositories.endpoints.byId(programId, id);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${id}`);
  return { webhookEndpointId: endpoint._id, secret: endpoint.secret, previousSecretExpiresAt: overlapEndOf(endpoint) };
}

export async function listWebhookEndpoints(
  repositories: Repositories,
  programId: string,
  page: PageRequest,
): Promise<{ items: WebhookEndpoint[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.endpoints.list(programId, page);
  return { items: items.map((endpoint) => toWebhookEndpoint(endpoint)), nextCursor };
}
