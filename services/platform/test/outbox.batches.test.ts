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
  type OutboxFields,
} from '@affiliate/platform';
import { eventually, newProgramId, testInfra, uniqueName } from '@affiliate/platform/testing';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';

/**
 * The relay's batches (issue 29): the documents waiting together are read, published and cleared
 * together, programs taking turns within them. These tests hold a batch in flight, on the real
 * broker and database, for as long as they need: the bus's publishes wait until the test lets
 * them go, and what the test then looks at is what reached the broker and what the outbox keeps.
 */
type Counter = { _id: string; programId: string; value: number; createdAt: Date } & Partial<OutboxFields>;

const logger = createLogger('outbox-batches-test', 'silent');
let connection: Connection;

beforeAll(async () => {
  connection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_outbox_batches') }).asPromise();
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

/** A bus to the real broker whose publishes wait, in arrival order, until the test lets them go. */
class HeldBus extends EventBus {
  readonly held: { events: EventEnvelope[]; go: () => void }[] = [];
  private holding = true;

  override async publishAll(events: EventEnvelope[]): Promise<void> {
    if (this.holding && events.length > 0) await new Promise<void>((go) => this.held.push({ events, go }));
    return super.publishAll(events);
  }

  /** The oldest publish held goes; returns its events. */
  letOneGo(): EventEnvelope[] {
    const next = this.held.shift();
    if (!next) throw new Error('no publish is held');
    next.go();
    return next.events;
  }

  /** Every publish goes, the held ones and those to come. */
  letAllGo(): void {
    this.holding = false;
    for (const next of this.held.splice(0)) next.go();
  }
}

const stops: (() => Promise<void>)[] = [];

type Setup = {
  Counters: Model<Counter>;
  store: AggregateStore<Counter>;
  bus: HeldBus;
  relay: OutboxRelay;
  /** What reached the broker, in the order it arrived. */
  received: EventEnvelope[];
};

/** A collection of the test's own (the relay's first sweep sees only it), its store's writes relayed by a relay on a held bus. */
async function start(): Promise<Setup> {
  const schema = new Schema<Counter>({ _id: String, programId: String, value: Number, createdAt: Date });
  schema.plugin(outboxPlugin);
  const Counters = connection.model<Counter>(uniqueName('Counter'), schema);
  await Counters.init();
  const exchange = uniqueName('outbox_batches');
  const bus = new HeldBus({ url: testInfra().amqpUrl, exchange, logger });
  const consumer = new EventBus({ url: testInfra().amqpUrl, exchange, logger });
  const received: EventEnvelope[] = [];
  await consumer.subscribe({
    queue: uniqueName('batches'),
    eventTypes: ['#'],
    // One at a time: the order recorded is the order the broker holds them in.
    prefetch: 1,
    processedEvents: processedEvents(connection, uniqueName('batches')),
    handler: async (event) => void received.push(event),
  });
  // No timed sweep: every document reaches the relay by its write, as in a running service.
  const relay = new OutboxRelay({ bus, logger, sweepIntervalMs: 3_600_000 });
  const store = new AggregateStore<Counter>({ connection, relay }, () => Counters);
  relay.start();
  stops.push(async () => {
    bus.letAllGo();
    await relay.stop();
    await bus.close();
    await consumer.close();
  });
  return { Counters, store, bus, relay, received };
}
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const created = (programId: string, id: string) => createEvent('coupon.created', programId, exampleEventData('coupon.created', { id }));

async function create({ store }: Setup, programId: string): Promise<string> {
  const id = randomUUID();
  await store.insert({ _id: id, programId, value: 0, createdAt: new Date() }, () => [created(programId, id)]);
  return id;
}

/** What a document's outbox holds, tombstones included: the types of its events, in order. */
async function outboxOf({ Counters }: Setup, id: string): Promise<string[] | undefined> {
  const document = await Counters.findOne({ _id: id, deletedAt: { $exists: true } })
    .select('+_outbox')
    .lean();
  return document?._outbox?.map((event) => event.type);
}

const isMarked = ({ Counters }: Setup, id: string) =>
  Counters.countDocuments({ _id: id, deletedAt: { $exists: true }, _pendingSince: { $exists: true } }).then((count) => count === 1);
const typesOf = (events: EventEnvelope[], id: string) => events.filter((event) => event.data.id === id).map((event) => event.type);

test("a write landing while its document's batch is in flight has its events published right after, and only what went out is cleared", async () => {
  const context = await start();
  const { store, bus } = context;
  const programId = newProgramId();
  const id = await create(context, programId);
  await eventually(() => expect(bus.held).toHaveLength(1));
  // Written while the batch that read the document waits for the broker.
  await store.change(programId, id, (current) => ({
    set: { value: current.value + 1 },
    events: (next) => [createEvent('coupon.updated', programId, exampleEventData('coupon.updated', { id, timesRedeemed: next.value }))],
  }));
  expect(typesOf(bus.letOneGo(), id)).toEqual(['coupon.created']);

  // The batch cleared what it published and nothing else; the document is relayed again for the rest.
  await eventually(() => expect(bus.held).toHaveLength(1));
  expect(typesOf(bus.held[0]?.events ?? [], id)).toEqual(['coupon.updated']);
  expect(await outboxOf(context, id)).toEqual(['coupon.updated']);
  expect(await isMarked(context, id)).toBe(true);

  bus.letAllGo();
  await eventually(() => expect(typesOf(context.received, id)).toEqual(['coupon.created', 'coupon.updated']));
  await eventually(async () => expect(await outboxOf(context, id)).toEqual([]));
  expect(await isMarked(context, id)).toBe(false);
});

test('in one batch, live documents are cleared and a tombstone is removed once its outbox is empty, not while an event of it is still to go', async () => {
  const context = await start();
  const { store, bus, Counters } = context;
  const programId = newProgramId();
  // Two batches in flight, held: what is written next waits and goes as one batch.
  await create(context, programId);
  await create(context, programId);
  await eventually(() => expect(bus.held).toHaveLength(2));
  const tombstone = await create(context, programId);
  await store.remove(programId, tombstone, () => [createEvent('coupon.deleted', programId, { id: tombstone })]);
  const live = [await create(context, programId), await create(context, programId)];

  bus.letOneGo();
  await eventually(() => expect(bus.held).toHaveLength(2));
  const batch = bus.held[1]?.events ?? [];
  expect(typesOf(batch, tombstone)).toEqual(['coupon.created', 'coupon.deleted']);
  for (const id of live) expect(typesOf(batch, id)).toEqual(['coupon.created']);
  // An event queued on the tombstone while its batch is in flight (as another replica's write
  // could): the tombstone must stay until that one is out too.
  const late = createEvent('coupon.updated', programId, exampleEventData('coupon.updated', { id: tombstone }));
  await Counters.collection.updateOne({ _id: tombstone } as never, { $push: { _outbox: late } } as never);

  bus.letAllGo();
  for (const id of live) {
    await eventually(async () => expect(await outboxOf(context, id)).toEqual([]));
    expect(await isMarked(context, id)).toBe(false);
  }
  await eventually(async () => expect(await outboxOf(context, tombstone)).toEqual(['coupon.updated']));
  expect(await isMarked(context, tombstone)).toBe(true);
  await eventually(() => expect(typesOf(context.received, tombstone)).toEqual(['coupon.created', 'coupon.deleted']));

  // Handed to the relay as a write would be: its last event goes out, and the tombstone with it.
  context.relay.written(Counters, tombstone, programId);
  await eventually(() => expect(typesOf(context.received, tombstone)).toEqual(['coupon.created', 'coupon.deleted', 'coupon.updated']));
  await eventually(async () => expect(await outboxOf(context, tombstone)).toBeUndefined());
});

test("programs take turns in the relay: a document written behind another program's burst of 200 goes out in the next batch", async () => {
  const context = await start();
  const { store, bus } = context;
  const busy = newProgramId();
  const quiet = newProgramId();
  // The burst's first two writes fill both batches in flight, held; the rest of it waits.
  await create(context, busy);
  await create(context, busy);
  await eventually(() => expect(bus.held).toHaveLength(2));
  const burst = Array.from({ length: 198 }, () => randomUUID());
  await store.insertAll(
    burst.map((id) => ({ _id: id, programId: busy, value: 0, createdAt: new Date() })),
    (stored) => [created(busy, stored._id)],
  );
  const late = await create(context, quiet);

  bus.letOneGo();
  await eventually(() => expect(bus.held).toHaveLength(2));
  const next = bus.held[1]?.events ?? [];
  expect(typesOf(next, late)).toEqual(['coupon.created']);
  expect(next.filter((event) => event.programId === busy).length).toBeGreaterThan(0);

  bus.letAllGo();
  await eventually(() => expect(context.received).toHaveLength(201), 60_000);
  // Ahead of most of the burst written before it: 201st in write order, among the first third out.
  expect(context.received.findIndex((event) => event.data.id === late)).toBeLessThan(67);
}, 90_000);
