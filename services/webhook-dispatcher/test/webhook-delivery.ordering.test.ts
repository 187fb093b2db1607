import { exampleEventData, type EventEnvelope, type PublicEventType } from '@affiliate/contracts';
import { createEvent, createLogger, EventBus, type RunningService } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId } from '@affiliate/platform/testing';
import request from 'supertest';
import type { DispatcherSettings } from '../src/config';
import { bootDispatcher, createEndpoint, deliveriesOf, deliveryReaching, testDispatcherSettings } from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

type Received = { id: string; data: { id: string }; revision?: number; previousAttributes?: Record<string, unknown> };

/**
 * A dispatcher, a subscriber, a bus to publish events carrying a revision (as the relays do), and a
 * program whose PER_OBJECT endpoints take `eventTypes` at the subscriber's `path`.
 */
function world(gapWaitMs: number, overrides: Partial<DispatcherSettings> = {}) {
  const running = {
    service: undefined as unknown as RunningService,
    subscriber: undefined as unknown as Subscriber,
    bus: undefined as unknown as EventBus,
    programId: newProgramId(),
    orderedEndpoint: (path: string, eventTypes: string[]) =>
      createEndpoint(running.service, running.programId, { url: running.subscriber.urlFor(path), eventTypes, ordering: 'PER_OBJECT' }),
  };
  beforeAll(async () => {
    [running.service, running.subscriber] = await Promise.all([
      bootDispatcher(testDispatcherSettings({ orderingGapWaitMs: gapWaitMs, ...overrides })),
      startSubscriber(),
    ]);
    const { settings } = running.service.context;
    running.bus = new EventBus({ url: settings.amqpUrl, exchange: settings.exchange, logger: createLogger('test-publisher', 'silent') });
  });
  afterAll(async () => {
    await running.bus.close();
    await running.service.stop();
    await running.subscriber.close();
  });
  return running;
}

/** An event about `objectId` at `revision` (none for an event stored before revisions), published now. */
async function publish(
  bus: EventBus,
  type: PublicEventType,
  programId: string,
  objectId: string,
  envelope: Partial<EventEnvelope> = {},
): Promise<EventEnvelope> {
  const event = { ...createEvent(type, programId, exampleEventData(type, { id: objectId } as never)), ...envelope };
  await bus.publish(event);
  return event;
}

const receivedAt = (subscriber: Subscriber, path: string): Received[] =>
  subscriber.received.filter((webhook) => webhook.path === `/${path}`).map((webhook) => JSON.parse(webhook.body) as Received);

describe('with a wait for missing revisions longer than any test', () => {
  const running = world(600_000);

  test('on a PER_OBJECT endpoint, a revision that reaches the dispatcher before the one it follows is delivered after it', async () => {
    const { service, subscriber, bus, programId } = running;
    await running.orderedEndpoint('ordered', ['sale.*']);
    const saleId = crypto.randomUUID();
    await publish(bus, 'sale.created', programId, saleId, { revision: 0 });
    await eventually(() => expect(receivedAt(subscriber, 'ordered').map((webhook) => webhook.revision)).toEqual([0]));

    // Revision 2 first (another relay was quicker): stored, and held while revision 1 is not there.
    const second = await publish(bus, 'sale.updated', programId, saleId, { revision: 2 });
    await eventually(async () =>
      expect(await deliveriesOf(service, programId, { eventId: second.id })).toMatchObject([{ status: 'pending', attempts: [] }]),
    );
    await publish(bus, 'sale.updated', programId, saleId, { revision: 1 });

    await eventually(() => expect(receivedAt(subscriber, 'ordered').map((webhook) => webhook.revision)).toEqual([0, 1, 2]));
  });

  test('the body carries the revision and previousAttributes the event has, and an event stored before them is still delivered, to an ordered endpoint too, without them', async () => {
    const { subscriber, bus, programId } = running;
    await running.orderedEndpoint('fields', ['referral.updated']);
    const changed = await publish(bus, 'referral.updated', programId, crypto.randomUUID(), {
      revision: 0,
      previousAttributes: { plan: 'basic' },
    });
    const older = await publish(bus, 'referral.updated', programId, crypto.randomUUID());

    await eventually(() => expect(receivedAt(subscriber, 'fields')).toHaveLength(2));
    const byId = new Map(receivedAt(subscriber, 'fields').map((webhook) => [webhook.id, webhook]));
    expect(byId.get(changed.id)).toMatchObject({ revision: 0, previousAttributes: { plan: 'basic' } });
    expect(Object.keys(byId.get(older.id) ?? {}).sort()).toEqual(['createdAt', 'data', 'event', 'id']);
  });

  test('on a PER_OBJECT endpoint, a revision held behind one that fails for good (its retry schedule used up) goes once that one has failed', async () => {
    const { service, subscriber, bus, programId } = running;
    const endpoint = await running.orderedEndpoint('dead', ['sale.updated']);
    // Revision 0 is refused on every attempt (the schedule here makes three).
    subscriber.answer((webhook) =>
      webhook.path === '/dead' && (JSON.parse(webhook.body) as Received).revision === 0 ? { status: 503 } : { status: 200 },
    );
    const saleId = crypto.randomUUID();
    const first = await publish(bus, 'sale.updated', programId, saleId, { revision: 0 });
    await publish(bus, 'sale.updated', programId, saleId, { revision: 1 });

    await deliveryReaching(service, programId, { eventId: first.id, endpointId: endpoint.id }, 'failed');
    await eventually(() => expect(receivedAt(subscriber, 'dead').map((webhook) => webhook.revision)).toEqual([0, 0, 0, 1]));
  });
});

/** The delivery orders the dispatcher keeps for an endpoint's objects (webhook_object_orders, `<endpointId> <objectKey>`). */
const ordersOf = (service: RunningService, endpointId: string) =>
  service.context.connection.collection('webhook_object_orders').countDocuments({ _id: { $regex: `^${endpointId} ` } as never });

describe('with events kept a second, swept every second, and a short wait for missing revisions', () => {
  const running = world(300, { eventRetentionMs: 1000, eventSweepIntervalMs: 1000 });

  test('the delivery order of an object that has not changed for the retention is removed, and a later revision of it still goes, after the wait for a predecessor the endpoint no longer knows of', async () => {
    const { service, subscriber, bus, programId } = running;
    const endpoint = await running.orderedEndpoint('swept', ['sale.updated']);
    const saleId = crypto.randomUUID();
    await publish(bus, 'sale.updated', programId, saleId, { revision: 0 });
    await eventually(() => expect(receivedAt(subscriber, 'swept').map((webhook) => webhook.revision)).toEqual([0]));

    await eventually(async () => expect(await ordersOf(service, endpoint.id)).toBe(0));
    await publish(bus, 'sale.updated', programId, saleId, { revision: 1 });
    await eventually(() => expect(receivedAt(subscriber, 'swept').map((webhook) => webhook.revision)).toEqual([0, 1]));
  });
});

describe('with a retry ten minutes after a first failure', () => {
  const running = world(600_000, { retryScheduleMs: [0, 600_000] });

  test("on a PER_OBJECT endpoint, a revision held behind a failed attempt waits until that one's next attempt, untried, and goes the moment a re-send delivers that one", async () => {
    const { service, subscriber, bus, programId } = running;
    await running.orderedEndpoint('far', ['coupon.updated']);
    let refuse = true;
    subscriber.answer((webhook) => (webhook.path === '/far' && refuse ? { status: 503 } : { status: 200 }));
    const couponId = crypto.randomUUID();
    const first = await publish(bus, 'coupon.updated', programId, couponId, { revision: 0 });
    const failedOnce = await eventually(async () => {
      const [delivery] = await deliveriesOf(service, programId, { eventId: first.id });
      expect(delivery).toMatchObject({ status: 'pending', attempts: [{ statusCode: 503 }] });
      return delivery as NonNullable<typeof delivery>;
    });
    const second = await publish(bus, 'coupon.updated', programId, couponId, { revision: 1 });

    // Held until revision 0's retry ten minutes away, not looked at again and again meanwhile.
    const held = await eventually(async () => {
      const [delivery] = await deliveriesOf(service, programId, { eventId: second.id });
      expect(delivery?.nextAttemptAt).toBe(failedOnce.nextAttemptAt);
      return delivery as NonNullable<typeof delivery>;
    });
    expect(held).toMatchObject({ status: 'pending', attempts: [] });

    refuse = false;
    await request(service.server)
      .post('/webhook-deliveries/retry')
      .set(internalHeaders(programId))
      .send({ deliveryId: failedOnce.id })
      .expect(200);
    await deliveryReaching(service, programId, { eventId: second.id }, 'succeeded');
    expect(receivedAt(subscriber, 'far').map((webhook) => webhook.revision)).toEqual([0, 0, 1]);
  });
});

describe('with a short wait for missing revisions', () => {
  const running = world(300);

  test('deleting a PER_OBJECT endpoint removes the delivery orders of its objects', async () => {
    const { service, subscriber, bus, programId } = running;
    const endpoint = await running.orderedEndpoint('deleted', ['sale.updated']);
    await publish(bus, 'sale.updated', programId, crypto.randomUUID(), { revision: 0 });
    await publish(bus, 'sale.updated', programId, crypto.randomUUID(), { revision: 0 });
    await eventually(() => expect(receivedAt(subscriber, 'deleted')).toHaveLength(2));
    expect(await ordersOf(service, endpoint.id)).toBe(2);

    await request(service.server)
      .delete('/webhook-endpoints')
      .set(internalHeaders(programId))
      .send({ webhookEndpointId: endpoint.id })
      .expect(200);
    expect(await ordersOf(service, endpoint.id)).toBe(0);
  });

  test('on a PER_OBJECT endpoint, a revision whose predecessor never arrives is not held for ever: it goes after the wait, and the next ones follow it in order', async () => {
    const { subscriber, bus, programId } = running;
    await running.orderedEndpoint('gap', ['coupon.updated']);
    const couponId = crypto.randomUUID();
    // Revisions 0 and 1 never come (a change that announced nothing, a type the endpoint does not take).
    await publish(bus, 'coupon.updated', programId, couponId, { revision: 2 });
    await publish(bus, 'coupon.updated', programId, couponId, { revision: 3 });
    await eventually(() => expect(receivedAt(subscriber, 'gap').map((webhook) => webhook.revision)).toEqual([2, 3]));
  });
});
