import type { RunningService } from '@affiliate/platform';
import { eventually, newProgramId } from '@affiliate/platform/testing';
import {
  bootDispatcher,
  createEndpoint,
  deliveriesOf,
  deliveryReaching,
  eventPublisher,
  testDispatcherSettings,
} from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

let service: RunningService;
let publisher: ReturnType<typeof eventPublisher>;
let hanging: Subscriber;
let healthy: Subscriber;
const programId = newProgramId();

beforeAll(async () => {
  [service, hanging, healthy] = await Promise.all([
    bootDispatcher(testDispatcherSettings({ timeoutMs: 15_000, endpointConcurrency: 2 })),
    startSubscriber(() => 'hang'),
    startSubscriber(() => ({ status: 200 })),
  ]);
  publisher = eventPublisher(service);
});
afterAll(async () => {
  await publisher.close();
  await service.stop();
  await Promise.all([hanging.close(), healthy.close()]);
});

test('a subscriber that hangs does not delay another endpoint: the healthy one is served while the hanging request is still open', async () => {
  const slow = await createEndpoint(service, programId, { url: hanging.url, eventTypes: ['sale.created'] });
  await createEndpoint(service, programId, { url: healthy.url, eventTypes: ['sale.created'] });
  // More events than the hanging endpoint has slots: its backlog must not take the healthy endpoint's turn.
  const events = [];
  for (let index = 0; index < 6; index += 1) events.push(await publisher.publish('sale.created', programId));

  await eventually(() => expect(healthy.received).toHaveLength(6));
  expect(hanging.unanswered()).toBe(2);
  expect(hanging.received).toHaveLength(2);
  const waiting = await deliveriesOf(service, programId, { endpointId: slow.id, status: 'pending' });
  expect(waiting).toHaveLength(6);
  expect(waiting.every((delivery) => delivery.attempts.length === 0)).toBe(true);
});

test('an endpoint never has more requests open than its concurrency (2), each counted until its subscriber has answered', async () => {
  const ownProgram = newProgramId();
  let open = 0;
  let mostOpen = 0;
  // Counted closed just before the answer goes (the timer set first fires first), so never too low.
  const slowish = await startSubscriber(() => {
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    setTimeout(() => (open -= 1), 200);
    return { status: 200, delayMs: 200 };
  });
  try {
    const endpoint = await createEndpoint(service, ownProgram, { url: slowish.url, eventTypes: ['sale.created'] });
    for (let index = 0; index < 12; index += 1) await publisher.publish('sale.created', ownProgram);
    await eventually(async () =>
      expect(await deliveriesOf(service, ownProgram, { endpointId: endpoint.id, status: 'succeeded', limit: '100' })).toHaveLength(12),
    );
    expect(slowish.received).toHaveLength(12);
    expect(mostOpen).toBeLessThanOrEqual(2);
  } finally {
    await slowish.close();
  }
});

test('an attempt that gets no answer within the timeout fails and is retried', async () => {
  const quick = await bootDispatcher(testDispatcherSettings({ timeoutMs: 300, retryScheduleMs: [0, 100] }));
  const quickPublisher = eventPublisher(quick);
  const silent = await startSubscriber(() => 'hang');
  try {
    const endpoint = await createEndpoint(quick, programId, { url: silent.url, eventTypes: ['affiliate.created'] });
    await quickPublisher.publish('affiliate.created', programId);
    const failed = await deliveryReaching(quick, programId, { endpointId: endpoint.id }, 'failed');
    expect(failed.attempts).toHaveLength(2);
    for (const attempt of failed.attempts)
      expect(attempt).toMatchObject({ statusCode: null, error: expect.stringMatching(/within 300 ms/) });
  } finally {
    await quickPublisher.close();
    await quick.stop();
    await silent.close();
  }
});

test('after a run of failures the circuit of the endpoint opens and its deliveries wait without being sent', async () => {
  const guarded = await bootDispatcher(
    testDispatcherSettings({
      retryScheduleMs: [0, 50, 50, 50, 50],
      breaker: { errorThresholdPercentage: 50, volumeThreshold: 3, resetTimeoutMs: 60_000 },
    }),
  );
  const guardedPublisher = eventPublisher(guarded);
  const failing = await startSubscriber(() => ({ status: 500 }));
  try {
    const endpoint = await createEndpoint(guarded, programId, { url: failing.url, eventTypes: ['promocode.deleted'] });
    const event = await guardedPublisher.publish('promocode.deleted', programId);
    await eventually(async () => {
      const [delivery] = await deliveriesOf(guarded, programId, { eventId: event.id });
      expect(delivery?.attempts).toHaveLength(3);
      expect(Date.parse(delivery?.nextAttemptAt as string)).toBeGreaterThan(Date.now() + 30_000);
    });
    expect(failing.received).toHaveLength(3);
    const [delivery] = await deliveriesOf(guarded, programId, { endpointId: endpoint.id });
    expect(delivery?.status).toBe('pending');
  } finally {
    await guardedPublisher.close();
    await guarded.stop();
    await failing.close();
  }
});
