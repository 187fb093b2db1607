import type { Connection } from 'mongoose';
import { webhookDeliveryModel } from './webhook-deliveries';
import { webhookEndpointModel } from './webhook-endpoints';

export function createModels(connection: Connection) {
  return {
    endpoints: webhookEndpointModel(connection),
    deliveries: webhookDeliveryModel(connection),
  };
}

export type Models = ReturnType<typeof createModels>;
