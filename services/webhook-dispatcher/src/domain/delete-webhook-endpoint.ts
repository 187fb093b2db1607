import type { Logger } from '@affiliate/platform';
import { notFound } from '@affiliate/platform';
import type { Repositories } from '../data-access/repositories';
import { failPendingDeliveries } from './endpoint-health';

/** Removes the endpoint for good; its delivery log stays readable, and nothing more is sent to it. */
export async function deleteWebhookEndpoint(
  repositories: Repositories,
  logger: Logger,
  programId: string,
  webhookEndpointId: string,
): Promise<{ id: string; deleted: true }> {
  if (!(await repositories.endpoints.remove(programId, webhookEndpointId)))
    throw notFound(`No webhook endpoint with id ${webhookEndpointId}`);
  await failPendingDeliveries(repositories, programId, webhookEndpointId);
  // Its objects' orders: nothing will be delivered to it again.
  await repositories.objectOrders.removeOfEndpoint(programId, webhookEndpointId);
  logger.info({ endpointId: webhookEndpointId }, 'webhook endpoint deleted');
  return { id: webhookEndpointId, deleted: true };
}
