import { FairShare, type ServiceContext } from '@affiliate/platform';
import type { DispatcherSettings } from '../../config';
import type { Repositories } from '../../data-access/repositories';
import { fanOutEvent, fanOutIntake } from '../../domain/fan-out-event';
import type { DeliveryScheduler } from '../scheduler/delivery-scheduler';

/**
 * Events in the fan-out at once. They cost no writes each: those in the fan-out together share one
 * batch of writes per program (fanOutIntake), so this bounds the batch, not the writes in flight.
 */
const FAN_OUT_CONCURRENCY = 64;
/**
 * Of those, one program's at most: its events wait for room in the scheduler (roomFor) while they
 * hold their place, and the other programs keep a quarter of the places meanwhile.
 */
const FAN_OUT_CONCURRENCY_PER_PROGRAM = 48;
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
  const intake = fanOutIntake(repositories, settings);
  return context.bus.subscribe({
    queue: FAN_OUT_QUEUE,
    eventTypes: ['#'],
    // No claim per event: the fan-out's writes are idempotent by their keys (fanOutEvents).
    // Up to this many events (a few MB) wait here instead of in the broker's queue, where they would be taken
    // strictly in order: a burst of one program would hold back every other program's webhooks.
    prefetch: FAN_OUT_WINDOW,
    fairShare: new FairShare(FAN_OUT_CONCURRENCY, undefined, FAN_OUT_CONCURRENCY_PER_PROGRAM),
    // One program's backlog takes at most its share of the window; the rest waits in the broker's queue.
    maxHeldPerProgram: settings.fanOutWindowPerProgram,
    handler: async (event) => {
      // Fanned out only as fast as the program's deliveries go out; until then it waits in the window.
      await scheduler.roomFor(event.programId);
      const { created, again } = await fanOutEvent(intake, event);
      scheduler.push(created);
      return again ? 'duplicate' : undefined;
    },
  });
}
