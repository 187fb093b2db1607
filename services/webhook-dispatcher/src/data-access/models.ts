import type { Connection } from 'mongoose';
import { webhookDeliveryModel } from './webhook-deliveries';
import { webhookEndpointModel } from './webhook-endpoints';
import { scheduledAttemptModel } from './webhook-schedule';

export function createModels(connection: Connection) {
  return {
    endpoints: webhookEndpointModel(connection),
    deliveries: webhookDeliveryModel(connection),
    schedule: scheduledAttemptModel(connection),
  };
}

export type Models = ReturnType<typeof createModels>;
