import { randomUUID } from 'node:crypto';
import { exampleEventData, type EventEnvelope } from '@affiliate/contracts';
import pino from 'pino';
import { EventBus, FairShare, createEvent, createLogger, processedEvents } from '@affiliate/platform';
import { eventually, newProgramId, testInfra, uniqueName } from '@affiliate/platform/testing';
import amqplib from 'amqplib';
import mongoose, { type Connection } from 'mongoose';

const logger = createLogger('event-bus-test', 'silent');
let connection: Connection;
let exchange: string;
let publisher: EventBus;
let consumer: EventBus;

beforeAll(async () => {
  connection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_bus') }).asPromise();
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});
beforeEach(() => {
  exchange = uniqueName('test_bus');
  publisher = new EventBus({ url: testInfra().amqpUrl, exchange, logger });
  consumer = new EventBus({ url: testInfra().amqpUrl, exchange, logger });
});
afterEach(async () => {
  await publisher.close();
  await consumer.close();
});

const couponCreated = () =>
  createEvent('coupon.created', newProgramId(), exampleEventData('coupon.created', { id: randomUUID(), name: 'Spring' }));

async function queueDepth(queue: string): Promise<number> {
  const amqp = await amqplib.connect(testInfra().amqpUrl);
  try {
    const channel = await amqp.createChannel();
    return (await channel.checkQueue(`${exchange}.${queue}`)).messageCount;
  } finally {
    await amqp.close();
  }
}

test('a published event reaches every queue bound to its type and no other', async () => {
  const couponEvents: EventEnvelope[] = [];
  const saleEvents: EventEnvelope[] = [];
  await consumer.subscribe({
    queue: 'coupons',
    eventTypes: ['coupon.*'],
    processedEvents: processedEvents(connection, uniqueName('c')),
    handler: async (event) => void couponEvents.push(event),
  });
  await consumer.subscribe({
    queue: 'sales',
    eventTypes: ['sale.created'],
    processedEvents: processedEvents(connection, uniqueName('s')),
    handler: async (event) => void saleEvents.push(event),
  });
  const event = couponCreated();
  await publisher.publish(event);
  await eventually(() => expect(couponEvents.map((received) => received.id)).toEqual([event.id]));
  expect(saleEvents).toEqual([]);
});

test('an event AMQP cannot carry (a type longer than 255 bytes, an occurredAt that is no date) is refused before it is sent, and the events published after it are confirmed as their own', async () => {
  const received: string[] = [];
  await consumer.subscribe({
    queue: 'after-refusal',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('r')),
    handler: async (event) => void received.push(event.id),
  });
  const unsendable = { ...couponCreated(), type: `coupon.${'x'.repeat(300)}` } as unknown as EventEnvelope;
  await expect(publisher.publish(unsendable)).rejects.toThrow(/cannot be published: its type is not a string of at most 255 bytes/);
  const undated = { ...couponCreated(), occurredAt: 'not a date' };
  await expect(publisher.publish(undated)).rejects.toThrow(/cannot be published: its occurredAt is not a date/);

  // Each confirmed by the broker on its own, not left waiting for the confirm of the message after it.
  const next = couponCreated();
  await publisher.publish(next);
  const batch = [couponCreated(), couponCreated()];
  await publisher.publishAll(batch);
  await eventually(() => expect(received.sort()).toEqual([next.id, ...batch.map((event) => event.id)].sort()));
});

test('a duplicate delivery is processed once', async () => {
  let handled = 0;
  await consumer.subscribe({
    queue: 'dupes',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('d')),
    handler: async () => void (handled += 1),
  });
  const event = couponCreated();
  await publisher.publish(event);
  await publisher.publish(event);
  const marker = couponCreated();
  let markerSeen = false;
  await consumer.subscribe({
    queue: 'marker',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('m')),
    handler: async (received) => void (markerSeen ||= received.id === marker.id),
  });
  await publisher.publish(marker);
  await eventually(() => expect(markerSeen).toBe(true));
  await eventually(() => expect(handled).toBe(2)); // the event once, the marker once
});

test('a consumer that fails once is retried and then succeeds', async () => {
  let calls = 0;
  await consumer.subscribe({
    queue: 'flaky',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('f')),
    retryDelayMs: 100,
    handler: async () => {
      calls += 1;
      if (calls === 1) throw new Error('transient failure');
    },
  });
  await publisher.publish(couponCreated());
  await eventually(() => expect(calls).toBe(2));
  expect(await queueDepth('flaky.dead')).toBe(0);
});

test('a consumer that keeps throwing is retried up to the bound and then dead-lettered', async () => {
  let calls = 0;
  await consumer.subscribe({
    queue: 'broken',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('b')),
    maxAttempts: 3,
    retryDelayMs: 100,
    handler: async () => {
      calls += 1;
      throw new Error('always fails');
    },
  });
  await publisher.publish(couponCreated());
  await eventually(async () => expect(await queueDepth('broken.dead')).toBe(1));
  expect(calls).toBe(3);
});

test('an event whose data does not fit its type is dead-lettered without reaching the handler, with a log line naming the field', async () => {
  const lines: string[] = [];
  const recording = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
  const strictConsumer = new EventBus({ url: testInfra().amqpUrl, exchange, logger: recording });
  let calls = 0;
  try {
    await strictConsumer.subscribe({
      queue: 'misfit',
      eventTypes: ['coupon.created'],
      processedEvents: processedEvents(connection, uniqueName('p')),
      handler: async () => void (calls += 1),
    });
    const misfit = { ...couponCreated(), data: { ...exampleEventData('coupon.created'), timesRedeemed: 'three' } };
    await publisher.publish(misfit as EventEnvelope);
    await eventually(async () => expect(await queueDepth('misfit.dead')).toBe(1));
    expect(calls).toBe(0);
    expect(lines.map((line) => JSON.parse(line) as { field?: string; msg: string })).toEqual([
      expect.objectContaining({ field: 'data.timesRedeemed', msg: expect.stringContaining('coupon.created data does not fit its schema') }),
    ]);
  } finally {
    await strictConsumer.close();
  }
});

test('a message that is not an event envelope is dead-lettered without reaching the handler', async () => {
  let calls = 0;
  await consumer.subscribe({
    queue: 'poison',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('p')),
    handler: async () => void (calls += 1),
  });
  const amqp = await amqplib.connect(testInfra().amqpUrl);
  const channel = await amqp.createChannel();
  channel.publish(exchange, 'coupon.created', Buffer.from('{"not":"an envelope"'));
  await eventually(async () => expect(await queueDepth('poison.dead')).toBe(1));
  await amqp.close();
  expect(calls).toBe(0);
});

test('on quorum queues a failing consumer is retried through the retry queue, and one that keeps failing is dead-lettered', async () => {
  const quorumConsumer = new EventBus({ url: testInfra().amqpUrl, exchange, logger, queueType: 'quorum' });
  try {
    const calls = { flaky: 0, broken: 0 };
    const subscribe = (queue: 'flaky' | 'broken') =>
      quorumConsumer.subscribe({
        queue: `quorum-${queue}`,
        eventTypes: [queue === 'flaky' ? 'coupon.created' : 'coupon.deleted'],
        processedEvents: processedEvents(connection, uniqueName(queue)),
        maxAttempts: 3,
        retryDelayMs: 100,
        handler: async () => {
          calls[queue] += 1;
          if (queue === 'broken' || calls.flaky === 1) throw new Error('failure');
        },
      });
    await subscribe('flaky');
    await subscribe('broken');
    await publisher.publish(couponCreated());
    await publisher.publish(createEvent('coupon.deleted', newProgramId(), { id: randomUUID() }));
    // The retry queue's expired copy came back through at-least-once dead-lettering, a quorum queue's own.
    await eventually(() => expect(calls.flaky).toBe(2));
    await eventually(async () => expect(await queueDepth('quorum-broken.dead')).toBe(1));
    expect(calls.broken).toBe(3);
    expect(await queueDepth('quorum-flaky.dead')).toBe(0);
  } finally {
    await quorumConsumer.close();
  }
});

test('a consumer the broker cancels (its queue deleted) takes a new connection, declares the queue again and consumes', async () => {
  const handled: string[] = [];
  await consumer.subscribe({
    queue: 'cancelled',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('x')),
    handler: async (event) => void handled.push(event.id),
  });
  const amqp = await amqplib.connect(testInfra().amqpUrl);
  try {
    await (await amqp.createChannel()).deleteQueue(`${exchange}.cancelled`);
  } finally {
    await amqp.close();
  }
  // Until the consumer is back, its queue does not exist and an event is routed nowhere: publish until one arrives.
  const published: string[] = [];
  await eventually(
    async () => {
      const event = couponCreated();
      published.push(event.id);
      await publisher.publish(event);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(handled.filter((id) => published.includes(id)).length).toBeGreaterThan(0);
    },
    30_000,
    0,
  );
});

test("one program's backlog takes at most its share of the prefetched window, so another program's event is handled while it waits", async () => {
  const [busy, quiet] = [newProgramId(), newProgramId()];
  const eventOf = (programId: string) =>
    createEvent('coupon.created', programId, exampleEventData('coupon.created', { id: randomUUID(), name: 'Spring' }));
  const held: (() => void)[] = [];
  const handled: string[] = [];
  await consumer.subscribe({
    queue: 'window',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(connection, uniqueName('w')),
    retryDelayMs: 100,
    prefetch: 10,
    // Two at once, one per program: the busy program's event holds one place, the other is free.
    fairShare: new FairShare(2, undefined, 1),
    maxHeldPerProgram: 2,
    handler: async (event) => {
      if (event.programId === busy) await new Promise<void>((resolve) => held.push(resolve));
      handled.push(event.id);
    },
  });
  const backlog = Array.from({ length: 20 }, () => eventOf(busy));
  for (const event of backlog) await publisher.publish(event);
  await eventually(() => expect(held).toHaveLength(1));
  // Without a share, the window of 10 is all the busy program's: this event would wait in the broker.
  const other = eventOf(quiet);
  await publisher.publish(other);
  await eventually(() => expect(handled).toContain(other.id));
  expect(held).toHaveLength(1);
  // Let the backlog go: every event put back is handled, once.
  const releasing = setInterval(() => held.splice(0).forEach((release) => release()), 20);
  try {
    await eventually(() => expect(handled.filter((id) => id !== other.id).sort()).toEqual(backlog.map((event) => event.id).sort()), 30_000);
  } finally {
    clearInterval(releasing);
  }
});

test('a consumer stopped while a handler runs lets it finish before its database goes: the event is handled once and not left claimed for another replica to wait out', async () => {
  // A replica of its own, stopped as a service stops: the bus first, then the database.
  const replicaConnection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: connection.name }).asPromise();
  const replica = new EventBus({ url: testInfra().amqpUrl, exchange, logger });
  const consumerName = uniqueName('stopping');
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  const handled: string[] = [];
  await replica.subscribe({
    queue: 'stopping',
    eventTypes: ['coupon.created'],
    processedEvents: processedEvents(replicaConnection, consumerName),
    handler: async (event) => {
      started();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      handled.push(event.id);
    },
  });
  const event = couponCreated();
  await publisher.publish(event);
  await handlerStarted;
  await replica.close();
  await replicaConnection.close();

  expect(handled).toEqual([event.id]);
  // Before the fix the database closed under the handler: its claim stayed 'processing', and the
  // broker's redelivery to the other replica was 'busy' until the claim's lease ran out.
  const claim = await connection.collection('processed_events').findOne({ _id: `${consumerName}:${event.id}` as never });
  expect(claim?.state).toBe('done');
  expect(await queueDepth('stopping')).toBe(0);
});
