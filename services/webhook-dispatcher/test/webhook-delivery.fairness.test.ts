import type { RunningService } from '@affiliate/platform';
import { eventually, newProgramId } from '@affiliate/platform/testing';
import { bootDispatcher, createEndpoint, eventPublisher, testDispatcherSettings } from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

const BACKLOG = 200;

let service: RunningService;
let publisher: ReturnType<typeof eventPublisher>;
let busy: Subscriber;
let quiet: Subscriber;

beforeAll(async () => {
  [service, busy, quiet] = await Promise.all([
    // Two attempts at a time in all: every delivery competes for the same two slots.
    bootDispatcher(testDispatcherSettings({ maxInFlight: 2, endpointConcurrency: 2 })),
    startSubscriber(() => ({ status: 200, delayMs: 250 })),
    startSubscriber(() => ({ status: 200 })),
  ]);
  publisher = eventPublisher(service);
});
afterAll(async () => {
  await publisher.close();
  await service.stop();
  await Promise.all([busy.close(), quiet.close()]);
});

test("one program's backlog does not hold back another program's deliveries", async () => {
  const noisy = newProgramId();
  const other = newProgramId();
  await createEndpoint(service, noisy, { url: busy.url, eventTypes: ['referral.created'] });
  await createEndpoint(service, other, { url: quiet.url, eventTypes: ['referral.created'] });
  // The noisy program's backlog takes about 25 s to send (two at a time, 250 ms each).
  for (let index = 0; index < BACKLOG; index += 1) await publisher.publish('referral.created', noisy);
  const event = await publisher.publish('referral.created', other);

  // Served in its program's turn, not after the whole backlog that arrived before it.
  await eventually(() => expect(quiet.received.map((webhook) => webhook.headers['webhook-id'])).toEqual([event.id]), 20_000);
  expect(busy.received.length).toBeLessThan(BACKLOG / 2);
});
