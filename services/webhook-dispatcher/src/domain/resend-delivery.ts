import type { WebhookDelivery } from '@affiliate/contracts';
import { badRequest, conflict, notFound } from '@affiliate/platform';
import { toWebhookDelivery } from '../data-access/webhook-deliveries';
import { attemptDelivery, leaseMs, type Dispatcher } from './attempt-delivery';
import { claimDelivery } from './claim-delivery';

/**
 * POST /webhook-deliveries/retry: sends the delivery now, with the same webhook-id and body, and
 * answers with the delivery and this attempt in its log. A pending delivery keeps its schedule if
 * the re-send fails too.
 */
export async function resendDelivery(dispatcher: Dispatcher, programId: string, deliveryId: string): Promise<WebhookDelivery> {
  const { repositories } = dispatcher;
  const delivery = await repositories.deliveries.byId(programId, deliveryId);
  if (!delivery) throw notFound(`No webhook delivery with id ${deliveryId}`);
  const endpoint = await repositories.endpoints.byId(programId, delivery.endpointId);
  if (!endpoint) throw badRequest('The endpoint of this delivery has been deleted', 'webhook_endpoint_unavailable');
  if (!endpoint.active)
    throw badRequest(
      'The endpoint of this delivery is disabled: enable it (PUT /webhook-endpoints with active: true) first',
      'webhook_endpoint_unavailable',
    );

  const claimed = await claimDelivery(repositories, programId, deliveryId, leaseMs(dispatcher.settings));
  if (!claimed) throw conflict('This delivery is being sent right now; look at its log in a moment', 'concurrent_modification');
  const after = await attemptDelivery(dispatcher, claimed, 'manual');
  const stored = after ?? (await repositories.deliveries.byId(programId, deliveryId));
  if (!stored) throw notFound(`No webhook delivery with id ${deliveryId}`);
  return toWebhookDelivery(stored);
}
