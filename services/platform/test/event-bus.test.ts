import { randomUUID } from 'node:crypto';
import { exampleEventData, type EventEnvelope } from '@affiliate/contracts';
import pino from 'pino';
import { EventBus, createEvent, createLogger, processedEvents } from '@affiliate/platform';
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

const couponCreated = () => createEvent('coupon.created', newProgramId(), exampleEventData('coupon.created', { id: randomUUID(), name: 'Spring' }));

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
  await consumer.subscribe({ queue: 'coupons', eventTypes: ['coupon.*'], processedEvents: processedEvents(connection, uniqueName('c')), handler: async (event) => void couponEvents.push(event) });
  await consumer.subscribe({ queue: 'sales', eventTypes: ['sale.created'], processedEvents: processedEvents(connection, uniqueName('s')), handler: async (event) => void saleEvents.push(event) });
  const event = couponCreated();
  await publisher.publish(event);
  await eventually(() => expect(couponEvents.map((received) => received.id)).toEqual([event.id]));
  expect(saleEvents).toEqual([]);
});

test('a duplicate delivery is processed once', async () => {
  let handled = 0;
  await consumer.subscribe({ queue: 'dupes', eventTypes: ['coupon.created'], processedEvents: processedEvents(connection, uniqueName('d')), handler: async () => void (handled += 1) });
  const event = couponCreated();
  await publisher.publish(event);
  await publisher.publish(event);
  const marker = couponCreated();
  let markerSeen = false;
  await consumer.subscribe({ queue: 'marker', eventTypes: ['coupon.created'], processedEvents: processedEvents(connection, uniqueName('m')), handler: async (received) => void (markerSeen ||= received.id === marker.id) });
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
    await strictConsumer.subscribe({ queue: 'misfit', eventTypes: ['coupon.created'], processedEvents: processedEvents(connection, uniqueName('p')), handler: async () => void (calls += 1) });
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
  await consumer.subscribe({ queue: 'poison', eventTypes: ['coupon.created'], processedEvents: processedEvents(connection, uniqueName('p')), handler: async () => void (calls += 1) });
  const amqp = await amqplib.connect(testInfra().amqpUrl);
  const channel = await amqp.createChannel();
  channel.publish(exchange, 'coupon.created', Buffer.from('{"not":"an envelope"'));
  await eventually(async () => expect(await queueDepth('poison.dead')).toBe(1));
  await amqp.close();
  expect(calls).toBe(0);
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
