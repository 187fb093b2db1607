import type { RunningService } from '@affiliate/platform';
import { eventually, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import { bootDispatcher, createEndpoint, deliveriesOf, eventPublisher, testDispatcherSettings } from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

const ENDPOINTS = 4;
const EVENTS = 25;

const serviceSettings = testServiceSettings('webhook-dispatcher');
const running: RunningService[] = [];
let subscriber: Subscriber;

beforeAll(async () => {
  subscriber = await startSubscriber();
  // Retries are due at once, so both dispatchers' schedulers race for every one of them; the
  // endpoints' circuit breakers stay out of the way of the deliberate first failures. A generous
  // attempt timeout: on a loaded machine the local subscriber's answer once took 4.9 s of the 5 s,
  // and a timed-out attempt is retried by design, which is not the double send this test looks for.
  const settings = testDispatcherSettings({
    timeoutMs: 30_000,
    retryScheduleMs: [0, 0, 0],
    pollIntervalMs: 20,
    breaker: { errorThresholdPercentage: 100, volumeThreshold: 1_000, resetTimeoutMs: 1_000 },
  });
  running.push(await bootDispatcher(settings, serviceSettings), await bootDispatcher(settings, serviceSettings));
});
afterAll(async () => {
  for (const service of running) await service.stop();
  await subscriber.close();
});

test('two dispatchers claiming the same due delivery never both send it', async () => {
  const [one, two] = running as [RunningService, RunningService];
  const programId = newProgramId();
  // Each endpoint fails the first attempt of every event and takes the second.
  const attemptsSeen = new Map<string, number>();
  subscriber.answer((webhook) => {
    const key = `${webhook.path} ${String(webhook.headers['webhook-id'])}`;
    const seen = (attemptsSeen.get(key) ?? 0) + 1;
    attemptsSeen.set(key, seen);
    return { status: seen === 1 ? 500 : 200 };
  });
  for (let index = 0; index < ENDPOINTS; index += 1) {
    await createEndpoint(one, programId, { url: subscriber.urlFor(`endpoint-${index}`), eventTypes: ['referral.created'] });
  }
  const publisher = eventPublisher(one);
  const events = [];
  for (let index = 0; index < EVENTS; index += 1) events.push(await publisher.publish('referral.created', programId));
  await publisher.close();

  await eventually(
    async () => expect(await deliveriesOf(two, programId, { status: 'succeeded', limit: '100' })).toHaveLength(ENDPOINTS * EVENTS),
    120_000,
  );
  // Exactly the failed first attempt and the successful retry, never a second copy of either.
  const expected = new Map<string, number>();
  for (let index = 0; index < ENDPOINTS; index += 1) for (const event of events) expected.set(`/endpoint-${index} ${event.id}`, 2);
  expect(attemptsSeen).toEqual(expected);
  for (const delivery of await deliveriesOf(one, programId, { limit: '100' })) {
    expect(delivery.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 200]);
  }
}, 180_000);
