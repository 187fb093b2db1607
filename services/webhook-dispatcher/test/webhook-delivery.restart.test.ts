import type { RunningService } from '@affiliate/platform';
import { eventually, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import {
  bootDispatcher,
  createEndpoint,
  deliveriesOf,
  deliveryReaching,
  eventPublisher,
  testDispatcherSettings,
} from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

const programId = newProgramId();
const serviceSettings = testServiceSettings('webhook-dispatcher');
let subscriber: Subscriber;
const running: RunningService[] = [];

async function boot(settings = testDispatcherSettings({ retryScheduleMs: [0, 3000] })): Promise<RunningService> {
  const service = await bootDispatcher(settings, serviceSettings);
  running.push(service);
  return service;
}

/** The deliveries as the database holds them, read with no dispatcher in between. */
async function storedDeliveries(filter: Record<string, unknown>) {
  const stored = await (
    await import('mongoose')
  ).default
    .createConnection(serviceSettings.mongoUrl, { dbName: serviceSettings.dbName })
    .asPromise();
  try {
    return await stored.collection('webhook_deliveries').find(filter).toArray();
  } finally {
    await stored.close();
  }
}

beforeAll(async () => {
  subscriber = await startSubscriber();
});
afterAll(async () => {
  for (const service of running) await service.stop();
  await subscriber.close();
});

test('a dispatcher stopped in the middle of a retry schedule resumes it after a restart, with the same webhook-id', async () => {
  subscriber.answer((_webhook, index) => (index === 0 ? { status: 500 } : { status: 200 }));
  const first = await boot();
  const publisher = eventPublisher(first);
  await createEndpoint(first, programId, { url: subscriber.url, eventTypes: ['sale.created'] });
  const event = await publisher.publish('sale.created', programId);
  await publisher.close();
  await eventually(async () => {
    const [delivery] = await deliveriesOf(first, programId, { eventId: event.id });
    expect(delivery?.attempts).toHaveLength(1);
  });
  await first.stop();

  // Stopped before the retry was due: the schedule is only in the database now.
  const [pending] = await storedDeliveries({ eventId: event.id });
  expect(pending).toMatchObject({ status: 'pending', scheduledAttempts: 1 });
  expect(subscriber.received).toHaveLength(1);

  const second = await boot();
  const delivered = await deliveryReaching(second, programId, { eventId: event.id }, 'succeeded');
  expect(delivered.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 200]);
  expect(subscriber.received.map((webhook) => webhook.headers['webhook-id'])).toEqual([event.id, event.id]);
  expect(subscriber.received[1]?.body).toBe(subscriber.received[0]?.body);
});

test('events published while the dispatcher is down are delivered after it starts again', async () => {
  const [current] = running.slice(-1) as [RunningService];
  await createEndpoint(current, programId, { url: subscriber.url, eventTypes: ['coupon.created'] });
  await current.stop();
  subscriber.answer(() => ({ status: 200 }));
  const publisher = eventPublisher(current);
  const event = await publisher.publish('coupon.created', programId);
  await publisher.close();

  const restarted = await boot();
  await deliveryReaching(restarted, programId, { eventId: event.id }, 'succeeded');
  expect(subscriber.received.filter((webhook) => webhook.headers['webhook-id'] === event.id)).toHaveLength(1);
});

test('two dispatchers on the same database and exchange send each delivery once', async () => {
  const [one] = running.slice(-1) as [RunningService];
  const two = await boot();
  const program = newProgramId();
  const received = await startSubscriber();
  try {
    await createEndpoint(one, program, { url: received.url, eventTypes: ['*'] });
    const publisher = eventPublisher(one);
    const events = [];
    for (let index = 0; index < 20; index += 1) events.push(await publisher.publish('referral.created', program));
    await publisher.close();
    await eventually(async () => expect(await deliveriesOf(two, program, { status: 'succeeded', limit: '100' })).toHaveLength(20));
    expect(received.received.map((webhook) => webhook.headers['webhook-id']).sort()).toEqual(events.map((event) => event.id).sort());
  } finally {
    await received.close();
  }
});

test('every attempt a subscriber received is in the delivery log once a stop returns, though attempts are recorded in batches', async () => {
  // The dispatchers of the tests above stop first: every attempt of this test is this one's.
  for (const service of running) await service.stop();
  const program = newProgramId();
  const first = await boot();
  const webhooks = 20;
  // The stop begins inside the subscriber's handling of the last webhook, which is never answered:
  // that attempt ends only when the stop cuts it short, so its record is written during the stop,
  // as are those of the attempts whose records were still waiting for their batch.
  let stopping: Promise<void> | undefined;
  let receivedHere = 0;
  subscriber.answer((webhook) => {
    if (webhook.path !== '/stopping') return { status: 200 };
    receivedHere += 1;
    if (receivedHere < webhooks) return { status: 200 };
    stopping ??= first.stop();
    return 'hang';
  });
  const publisher = eventPublisher(first);
  await createEndpoint(first, program, { url: subscriber.urlFor('stopping'), eventTypes: ['coupon.created'] });
  const events = await Promise.all(Array.from({ length: webhooks }, () => publisher.publish('coupon.created', program)));
  await publisher.close();
  const ids = new Set(events.map((event) => event.id));
  const receivedOfThese = () => subscriber.received.filter((webhook) => ids.has(String(webhook.headers['webhook-id']))).length;
  await eventually(() => expect(stopping).toBeDefined(), 60_000);
  await stopping;

  // Read straight after the stop, with no dispatcher running: what the log holds is what the stop wrote.
  const deliveries = await storedDeliveries({ programId: program });
  expect(deliveries).toHaveLength(events.length);
  expect(deliveries.filter((delivery) => (delivery.attempts as unknown[]).length === 0)).toEqual([]);
  const attempts = deliveries.reduce((sum, delivery) => sum + (delivery.attempts as unknown[]).length, 0);
  expect(attempts).toBeGreaterThanOrEqual(receivedOfThese());
});
