import type { Connection } from 'mongoose';
import { BackfillRepository } from './webhook-backfills';
import { WebhookDeliveryRepository } from './webhook-deliveries';
import { WebhookEndpointRepository } from './webhook-endpoints';
import { StoredEventRepository } from './webhook-events';
import { ScheduleRepository } from './webhook-schedule';

/** The key seals the endpoints' signing secrets at rest. */
export function createRepositories(context: { connection: Connection }, secretEncryptionKey: Buffer) {
  return {
    endpoints: new WebhookEndpointRepository(context, secretEncryptionKey),
    deliveries: new WebhookDeliveryRepository(context),
    schedule: new ScheduleRepository(context),
    events: new StoredEventRepository(context),
    backfills: new BackfillRepository(context),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
