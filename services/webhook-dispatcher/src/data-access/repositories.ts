import type { Connection } from 'mongoose';
import { ObjectOrderRepository } from './object-orders';
import { WebhookDeliveryRepository } from './webhook-deliveries';
import { WebhookEndpointRepository } from './webhook-endpoints';
import { ScheduleRepository } from './webhook-schedule';

/** The key seals the endpoints' signing secrets at rest. */
export function createRepositories(context: { connection: Connection }, secretEncryptionKey: Buffer) {
  return {
    endpoints: new WebhookEndpointRepository(context, secretEncryptionKey),
    deliveries: new WebhookDeliveryRepository(context),
    schedule: new ScheduleRepository(context),
    objectOrders: new ObjectOrderRepository(context),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
