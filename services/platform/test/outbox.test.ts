import { randomUUID } from 'node:crypto';
import { exampleEventData, type EventEnvelope } from '@affiliate/contracts';
import {
  AggregateStore,
  EventBus,
  OutboxRelay,
  createEvent,
  createLogger,
  outboxPlugin,
  processedEvents,
  type StoreContext,
} from '@affiliate/platform';
import { eventually, newProgramId, startDisposableRabbit, testInfra, uniqueName } from '@affiliate/platform/testing';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import type { OutboxFields } from '@affiliate/platform';

type Counter = { _id: string; programId: string; name: string; value: number; createdAt: Date } & Partial<OutboxFields>;

const logger = createLogger('outbox-test', 'silent');
let connection: Connection;
let Counters: Model<Counter>;

beforeAll(async () => {
  connection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_outbox') }).asPromise();
  const schema = new Schema<Counter>({ _id: String, programId: String, name: String, value: Number, createdAt: Date });
  schema.plugin(outboxPlugin);
  Counters = connection.model<Counter>('Counter', schema);
  // Its collection and indexes are made before the first test writes, not beside it.
  await Counters.init();
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

/** The platform's aggregate store over the test collection, as a service's repository would be. */
class CounterStore extends AggregateStore<Counter> {
  constructor(context: Omit<StoreContext, 'connection'>) {
    super({ ...context, connection }, () => Counters);
  }
}

async function createCounter(programId: string, store = new CounterStore({})): Promise<string> {
  const id = randomUUID();
  await store.insert({ _id: id, programId, name: 'clicks', value: 0, createdAt: new Date() }, () => [
    createEvent('coupon.created', programId, exampleEventData('coupon.created', { id, timesRedeemed: 0 })),
  ]);
  return id;
}

function collect(bus: EventBus, queue: string): Promise<EventEnvelope[]> {
  const received: EventEnvelope[] = [];
  return (
    bus
      // prefetch 1: the order recorded is the order published (several in flight can finish in any order).
      .subscribe({
        queue,
        eventTypes: ['#'],
        prefetch: 1,
        processedEvents: processedEvents(connection, uniqueName(queue)),
        handler: async (event) => void received.push(event),
      })
      .then(() => received)
  );
}

test('an event written while RabbitMQ is stopped is delivered after it restarts', async () => {
  const rabbit = await startDisposableRabbit();
  const exchange = uniqueName('outage');
  const publisher = new EventBus({ url: rabbit.url, exchange, logger, publishTimeoutMs: 1000 });
  const consumer = new EventBus({ url: rabbit.url, exchange, logger });
  const relay = new OutboxRelay({ bus: publisher, logger, sweepIntervalMs: 200 });
  relay.watch(Counters);
  try {
    const received = await collect(consumer, 'outage');
    relay.start();
    await rabbit.stop();

    const programId = newProgramId();
    const id = await createCounter(programId);
    await eventually(async () => expect(await relay.drain()).toBe(false)); // the broker is down: nothing published
    const queued = await Counters.findById(id).select('+_outbox').lean();
    expect(queued?._outbox).toHaveLength(1);

    await rabbit.start();
    await eventually(() => expect(received.map((event) => event.data.id)).toEqual([id]), 60_000);
    await eventually(async () => expect((await Counters.findById(id).select('+_outbox').lean())?._outbox).toEqual([]));
  } finally {
    await relay.stop();
    await publisher.close();
    await consumer.close();
    await rabbit.destroy();
  }
}, 180_000);

describe('with a running broker', () => {
  let publisher: EventBus;
  let consumer: EventBus;
  let relay: OutboxRelay;

  beforeEach(() => {
    const exchange = uniqueName('outbox');
    publisher = new EventBus({ url: testInfra().amqpUrl, exchange, logger });
    consumer = new EventBus({ url: testInfra().amqpUrl, exchange, logger });
    relay = new OutboxRelay({ bus: publisher, logger, sweepIntervalMs: 100 });
    relay.watch(Counters);
  });
  afterEach(async () => {
    await relay.stop();
    await publisher.close();
    await consumer.close();
  });

  test('concurrent changes to one document all land, each with an event carrying the state it stored', async () => {
    const received = await collect(consumer, 'concurrent');
    const programId = newProgramId();
    const id = await createCounter(programId);
    const store = new CounterStore({});
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.change(programId, id, (current) => ({
          set: { value: current.value + 1 },
          events: (next) => [
            createEvent('coupon.updated', programId, exampleEventData('coupon.updated', { id, timesRedeemed: next.value })),
          ],
        })),
      ),
    );
    expect((await Counters.findById(id).lean())?.value).toBe(20);
    relay.start();
    const ofThisCounter = () => received.filter((event) => event.data.id === id);
    await eventually(() => expect(ofThisCounter()).toHaveLength(21));
    const values = ofThisCounter()
      .filter((event) => event.type === 'coupon.updated')
      .map((event) => event.data.timesRedeemed);
    expect([...values].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
  });

  test('a deleted document vanishes from queries at once and is removed after its deleted event is out', async () => {
    const received = await collect(consumer, 'tombstones');
    const programId = newProgramId();
    const id = await createCounter(programId);
    const store = new CounterStore({});
    await store.remove(programId, id, () => [createEvent('coupon.deleted', programId, { id })]);
    expect(await store.byId(programId, id)).toBeNull();
    expect(await Counters.findOne({ _id: id })).toBeNull();
    expect(await Counters.countDocuments({ _id: id, deletedAt: { $ne: null } })).toBe(1);

    relay.start();
    await eventually(() =>
      expect(received.filter((event) => event.data.id === id).map((event) => event.type)).toEqual(['coupon.created', 'coupon.deleted']),
    );
    await eventually(async () => expect(await Counters.countDocuments({ _id: id, deletedAt: { $exists: true } })).toBe(0));
  });

  test('a read or change scoped to another program sees and touches nothing', async () => {
    const id = await createCounter(newProgramId());
    const store = new CounterStore({});
    const result = await store.change(newProgramId(), id, () => ({ set: { value: 99 }, events: () => [] }));
    expect(result).toBeNull();
    expect(await store.byId(newProgramId(), id)).toBeNull();
    expect((await Counters.findById(id).lean())?.value).toBe(0);
  });

  test("a write's events are published at once, by the document's id, without waiting for a sweep", async () => {
    const received = await collect(consumer, 'by-id');
    const relayByIdOnly = new OutboxRelay({ bus: publisher, logger, sweepIntervalMs: 3_600_000 });
    // The store hands each written document's id to its relay.
    const store = new CounterStore({ relay: relayByIdOnly });
    relayByIdOnly.start();
    try {
      const programId = newProgramId();
      const id = await createCounter(programId, store);
      await store.change(programId, id, (current) => ({
        set: { value: current.value + 1 },
        events: (next) => [createEvent('coupon.updated', programId, exampleEventData('coupon.updated', { id, timesRedeemed: next.value }))],
      }));
      await eventually(() =>
        expect(received.filter((event) => event.data.id === id).map((event) => event.type)).toEqual(['coupon.created', 'coupon.updated']),
      );
      // Once out, the document no longer carries the marker the sweep reads.
      await eventually(async () => expect(await Counters.countDocuments({ _id: id, _pendingSince: { $exists: true } })).toBe(0));
    } finally {
      await relayByIdOnly.stop();
    }
  });

  test('events a crash left behind, marked or written before the marker existed, are published by the sweep', async () => {
    const received = await collect(consumer, 'sweep');
    const programId = newProgramId();
    // Written straight to the collection: no relay heard of these writes, as after a crash.
    const marked = randomUUID();
    const unmarked = randomUUID();
    await Counters.collection.insertMany([
      {
        _id: marked,
        programId,
        name: 'clicks',
        value: 0,
        revision: 0,
        deletedAt: null,
        _pendingSince: new Date(0),
        _outbox: [createEvent('coupon.created', programId, exampleEventData('coupon.created', { id: marked }))],
      },
      {
        _id: unmarked,
        programId,
        name: 'clicks',
        value: 0,
        revision: 0,
        deletedAt: null,
        _outbox: [createEvent('coupon.created', programId, exampleEventData('coupon.created', { id: unmarked }))],
      },
    ] as never[]);
    relay.start();
    await eventually(() =>
      expect(
        received
          .map((event) => event.data.id)
          .filter((id) => id === marked || id === unmarked)
          .sort(),
      ).toEqual([marked, unmarked].sort()),
    );
    await eventually(async () =>
      expect(await Counters.countDocuments({ _id: { $in: [marked, unmarked] }, _pendingSince: { $exists: true } })).toBe(0),
    );
  });
});
