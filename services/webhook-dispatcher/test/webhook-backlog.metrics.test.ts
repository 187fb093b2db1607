import type { RunningService } from '@affiliate/platform';
import { eventually, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import { bootDispatcher, createEndpoint, eventPublisher, testDispatcherSettings } from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

/**
 * Issue 26, the webhook backlog: the gauges read the schedule in the database, so they count every
 * delivery due and not being sent, whether or not this dispatcher holds it in memory, and every
 * replica reports the same value.
 */
let service: RunningService;
let other: RunningService;
let publisher: ReturnType<typeof eventPublisher>;
let silent: Subscriber;
const programId = newProgramId();

beforeAll(async () => {
  // One attempt at a time per replica, towards a subscriber that never answers: the rest wait, due and unsent.
  const settings = testDispatcherSettings({ timeoutMs: 60_000, maxInFlight: 1, endpointConcurrency: 1 });
  // Two replicas: one database, one broker queue.
  const shared = testServiceSettings('webhook-dispatcher');
  [service, other, silent] = await Promise.all([
    bootDispatcher(settings, shared),
    bootDispatcher(settings, shared),
    startSubscriber(() => 'hang'),
  ]);
  publisher = eventPublisher(service);
});
afterAll(async () => {
  await publisher.close();
  await Promise.all([service.stop(), other.stop()]);
  await silent.close();
});

const sample = (text: string, name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
const backlogOf = async (running: RunningService) => {
  const text = await running.context.metrics.registry.metrics();
  return { due: sample(text, 'webhook_deliveries_due'), oldest: sample(text, 'webhook_oldest_due_age_seconds') };
};

test('deliveries due in the database are the backlog whichever replica holds them: a replica counts those it does not hold, and every replica reports the same', async () => {
  await createEndpoint(service, programId, { url: silent.url, eventTypes: ['sale.created'] });
  for (let index = 0; index < 6; index += 1) await publisher.publish('sale.created', programId);
  // Each replica that got events has one attempt in flight to the silent subscriber (its one slot);
  // every other delivery is due and unsent, wherever it waits, and both replicas count all of them.
  await eventually(async () => {
    const [mine, theirs] = await Promise.all([backlogOf(service), backlogOf(other)]);
    expect(silent.received).toHaveLength(silent.unanswered());
    expect(mine.due).toBe(6 - silent.unanswered());
    expect(theirs.due).toBe(mine.due);
    expect(mine.oldest).toBeGreaterThan(0);
    expect(theirs.oldest).toBeGreaterThan(0);
  }, 30_000);
});
