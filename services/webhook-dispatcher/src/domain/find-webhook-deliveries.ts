import type { WebhookDelivery } from '@affiliate/contracts';
import type { PageRequest } from '@affiliate/platform';
import type { Repositories } from '../data-access/repositories';
import { toWebhookDelivery, type DeliveryFilter } from '../data-access/webhook-deliveries';

/** The delivery log, newest first, each delivery with its attempts. */
export async function listWebhookDeliveries(
  repositories: Repositories,
  programId: string,
  filter: DeliveryFilter,
  page: PageRequest,
): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.deliveries.list(programId, filter, page);
  return { items: items.map(toWebhookDelivery), nextCursor };
}
