import { processedEvents, type ServiceContext } from '@affiliate/platform';
import type { DispatcherSettings } from '../../config';
import type { Repositories } from '../../data-access/repositories';
import { fanOutEvent } from '../../domain/fan-out-event';
import type { DeliveryScheduler } from '../scheduler/delivery-scheduler';

/**
 * Every event on the bus: the public ones become deliveries, internal ones are skipped. The handler
 * resolves (and the message is acked) only after the deliveries are stored; their first attempt
 * follows at once.
 */
export function subscribeToEvents(context: ServiceContext, repositories: Repositories, settings: DispatcherSettings, scheduler: DeliveryScheduler): Promise<void> {
  return context.bus.subscribe({
    queue: 'webhook-dispatcher.events',
    eventTypes: ['#'],
    processedEvents: processedEvents(context.connection, 'webhook-dispatcher'),
    handler: async (event) => {
      scheduler.push(await fanOutEvent(repositories, settings, event));
    },
  });
}
