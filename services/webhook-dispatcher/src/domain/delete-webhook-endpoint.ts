import type { Logger } from '@affiliate/platform';
import { notFound } from '@affiliate/platform';
import type { Models } from '../data-access/models';
import { failPendingDeliveries } from './endpoint-health';

/** Removes the endpoint for good; its delivery log stays readable, and nothing more is sent to it. */
export async function deleteWebhookEndpoint(models: Models, logger: Logger, programId: string, webhookEndpointId: string): Promise<{ id: string; deleted: true }> {
  const deleted = await models.endpoints.findOneAndDelete({ _id: webhookEndpointId, programId }).lean();
  if (!deleted) throw notFound(`No webhook endpoint with id ${webhookEndpointId}`);
  await failPendingDeliveries(models, webhookEndpointId);
  logger.info({ endpointId: webhookEndpointId }, 'webhook endpoint deleted');
  return { id: webhookEndpointId, deleted: true };
}
