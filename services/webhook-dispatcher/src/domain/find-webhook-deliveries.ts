import type { DeliveryStatus, WebhookDelivery } from '@affiliate/contracts';
import { findPage, type PageRequest } from '@affiliate/platform';
import type { FilterQuery } from 'mongoose';
import type { Models } from '../data-access/models';
import { toWebhookDelivery, type WebhookDeliveryDocument } from '../data-access/webhook-deliveries';

export type DeliveryFilter = { endpointId?: string; eventId?: string; status?: DeliveryStatus };

/** The delivery log, newest first, each delivery with its attempts. */
export async function listWebhookDeliveries(
  models: Models,
  programId: string,
  filter: DeliveryFilter,
  page: PageRequest,
): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
  const scope: FilterQuery<WebhookDeliveryDocument> = { programId };
  if (filter.endpointId !== undefined) scope.endpointId = filter.endpointId;
  if (filter.eventId !== undefined) scope.eventId = filter.eventId;
  if (filter.status !== undefined) scope.status = filter.status;
  const { items, nextCursor } = await findPage<WebhookDeliveryDocument>(models.deliveries, scope, page);
  return { items: items.map(toWebhookDelivery), nextCursor };
}
