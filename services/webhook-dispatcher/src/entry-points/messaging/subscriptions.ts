import { FairShare, processedEvents, type ServiceContext } from '@affiliate/platform';
import type { DispatcherSettings } from '../../config';
import type { Repositories } from '../../data-access/repositories';
import { fanOutEvent } from '../../domain/fan-out-event';
import type { DeliveryScheduler } from '../scheduler/delivery-scheduler';

/** Events fanned out at once (each a few database writes). */
const FAN_OUT_CONCURRENCY = 16;
/** Events taken from the broker ahead of their turn, so that programs can take turns among them. */
const FAN_OUT_WINDOW = 10_000;
/** The subscription's name, by which the bus tells what it holds per program (heldPerProgram). */
export const FAN_OUT_QUEUE = 'webhook-dispatcher.events';

/**
 * Every event on the bus: the public ones become deliveries, internal ones are skipped. The handler
 * resolves (and the message is acked) only after the deliveries are stored; their first attempt
 * follows at once.
 */
export function subscribeToEvents(
  context: ServiceContext,
  repositories: Repositories,
  settings: DispatcherSettings,
  scheduler: DeliveryScheduler,
): Promise<void> {
  return context.bus.subscribe({
    queue: FAN_OUT_QUEUE,
    eventTypes: ['#'],
    processedEvents: processedEvents(context.connection, 'webhook-dispatcher'),
    // Up to this many events (a few MB) wait here instead of in the broker's queue, where they would be taken
    // strictly in order: a burst of one program would hold back every other program's webhooks.
    prefetch: FAN_OUT_WINDOW,
    fairShare: new FairShare(FAN_OUT_CONCURRENCY),
    // One program's backlog takes at most its share of the window; the rest waits in the broker's queue.
    maxHeldPerProgram: settings.fanOutWindowPerProgram,
    handler: async (event) => {
      scheduler.push(await fanOutEvent(repositories, settings, event));
    },
  });
}
