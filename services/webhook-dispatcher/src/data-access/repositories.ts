import type { Connection } from 'mongoose';
import { WebhookDeliveryRepository } from './webhook-deliveries';
import { WebhookEndpointRepository } from './webhook-endpoints';
import { ScheduleRepository } from './webhook-schedule';

export function createRepositories(context: { connection: Connection }) {
  return {
    endpoints: new WebhookEndpointRepository(context),
    deliveries: new WebhookDeliveryRepository(context),
    schedule: new ScheduleRepository(context),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
