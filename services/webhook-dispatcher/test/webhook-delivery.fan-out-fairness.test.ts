import type { RunningService } from '@affiliate/platform';
import { eventually, newProgramId } from '@affiliate/platform/testing';
import { bootDispatcher, createEndpoint, eventPublisher } from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

const BURST = 1000;

let service: RunningService;
let publisher: ReturnType<typeof eventPublisher>;
let busy: Subscriber;
let quiet: Subscriber;

beforeAll(async () => {
  // Default settings and fast subscribers: turning events into deliveries is the slow part here.
  [service, busy, quiet] = await Promise.all([
    bootDispatcher(),
    startSubscriber(() => ({ status: 200 })),
    startSubscriber(() => ({ status: 200 })),
  ]);
  publisher = eventPublisher(service);
});
afterAll(async () => {
  await publisher.close();
  await service.stop();
  await Promise.all([busy.close(), quiet.close()]);
});

test("one program's burst of events waiting in the queue does not hold back another program's webhook", async () => {
  const noisy = newProgramId();
  const other = newProgramId();
  await createEndpoint(service, noisy, { url: busy.url, eventTypes: ['referral.created'] });
  await createEndpoint(service, other, { url: quiet.url, eventTypes: ['referral.created'] });
  // The whole burst is in the broker's queue, in front of the other program's event.
  await Promise.all(Array.from({ length: BURST }, () => publisher.publish('referral.created', noisy)));
  const event = await publisher.publish('referral.created', other);

  // Fanned out in its program's turn, not after the burst that was queued before it.
  await eventually(() => expect(quiet.received.map((webhook) => webhook.headers['webhook-id'])).toEqual([event.id]), 60_000);
  expect(busy.received.length).toBeLessThan(BURST / 2);
  // Every event of the burst arrives too: counted by webhook-id, since an attempt that outlasts its
  // timeout on a loaded machine is sent again under the same id (at-least-once; receivers deduplicate).
  await eventually(() => expect(new Set(busy.received.map((webhook) => webhook.headers['webhook-id'])).size).toBe(BURST), 120_000);
}, 180_000);
