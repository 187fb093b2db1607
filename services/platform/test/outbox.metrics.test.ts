import { randomUUID } from 'node:crypto';
import { exampleEventData } from '@affiliate/contracts';
import {
  AggregateStore,
  EventBus,
  OutboxRelay,
  createEvent,
  createLogger,
  createMetrics,
  outboxPlugin,
  type OutboxFields,
} from '@affiliate/platform';
import { eventually, freePort, newProgramId, testInfra, uniqueName } from '@affiliate/platform/testing';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';

/**
 * The outbox gauges (issue 26) come from what the relay knows, never from a query per scrape. A
 * document whose events a crash left behind (written, never handed to a relay) is known from the
 * relay's first sweep on, aged from its own marker, not from when the sweep found it.
 */
type Counter = { _id: string; programId: string; value: number; createdAt: Date } & Partial<OutboxFields>;

const logger = createLogger('outbox-metrics-test', 'silent');
let connection: Connection;
let Counters: Model<Counter>;

beforeAll(async () => {
  connection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_outbox_metrics') }).asPromise();
  const schema = new Schema<Counter>({ _id: String, programId: String, value: Number, createdAt: Date });
  schema.plugin(outboxPlugin);
  Counters = connection.model<Counter>('Counter', schema);
  // Mongoose creates the collection in the background; the local server refuses the loser of two
  // creations of one collection (an insert creates it too), so the test writes only once it exists.
  await Counters.init();
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

const sample = (text: string, name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);

test('a document a crash left with events is counted as pending from the first sweep, aged from its marker; failed publishes are counted', async () => {
  // Written by a store with no relay, as a process that crashed before relaying would leave it.
  const store = new AggregateStore<Counter>({ connection }, () => Counters);
  const programId = newProgramId();
  const id = randomUUID();
  await store.insert({ _id: id, programId, value: 0, createdAt: new Date() }, () => [
    createEvent('coupon.created', programId, exampleEventData('coupon.created', { id, timesRedeemed: 0 })),
  ]);
  const marker = (await Counters.findById(id).select('+_pendingSince').lean())?._pendingSince;
  expect(marker).toBeInstanceOf(Date);

  // A broker nobody listens on: the relay cannot publish, so the document stays pending.
  const metrics = createMetrics('outbox-metrics');
  const bus = new EventBus({
    url: `amqp://guest:guest@127.0.0.1:${await freePort()}`,
    exchange: uniqueName('nowhere'),
    logger,
    publishTimeoutMs: 200,
  });
  const relay = new OutboxRelay({ bus, logger, sweepIntervalMs: 60_000, retryIntervalMs: 100, metrics: metrics.outbox });
  relay.watch(Counters);
  expect(sample(await metrics.registry.metrics(), 'outbox_documents_pending')).toBe(0);
  try {
    relay.start();
    await eventually(
      async () => {
        const text = await metrics.registry.metrics();
        expect(sample(text, 'outbox_documents_pending')).toBe(1);
        expect(sample(text, 'outbox_publish_failures_total')).toBeGreaterThanOrEqual(1);
      },
      20_000,
      50,
    );
    expect(relay.backlog()).toEqual({ pending: 1, oldestSince: marker!.getTime() });
    expect(sample(await metrics.registry.metrics(), 'outbox_events_published_total')).toBe(0);
  } finally {
    await relay.stop();
    await bus.close().catch(() => undefined);
  }
}, 60_000);

test("two replicas' relays export the same outbox gauges, the service's whole backlog, so max() over them counts it once", async () => {
  // Two replicas of one service: one database, each its own relay; the broker away, so nothing leaves.
  const Twins = connection.model<Counter>('Twin', Counters.schema.clone());
  await Twins.init();
  const replicas = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const metrics = createMetrics(`outbox-replica-${name}`);
      const bus = new EventBus({
        url: `amqp://guest:guest@127.0.0.1:${await freePort()}`,
        exchange: uniqueName('nowhere'),
        logger,
        publishTimeoutMs: 200,
      });
      const relay = new OutboxRelay({ bus, logger, sweepIntervalMs: 60_000, retryIntervalMs: 100, metrics: metrics.outbox });
      relay.watch(Twins);
      return { metrics, bus, relay };
    }),
  );
  const gauges = async () =>
    Promise.all(
      replicas.map(async ({ metrics }) => {
        const text = await metrics.registry.metrics();
        return { pending: sample(text, 'outbox_documents_pending'), aged: sample(text, 'outbox_oldest_pending_age_seconds') > 0 };
      }),
    );
  try {
    for (const { relay } of replicas) relay.start();
    // Both writes land on replica a: only its relay hears of them (b's sweep is a minute away).
    const onReplicaA = new AggregateStore<Counter>({ connection, relay: replicas[0]!.relay }, () => Twins);
    const programId = newProgramId();
    for (const id of [randomUUID(), randomUUID()]) {
      await onReplicaA.insert({ _id: id, programId, value: 0, createdAt: new Date() }, () => [
        createEvent('coupon.created', programId, exampleEventData('coupon.created', { id, timesRedeemed: 0 })),
      ]);
    }
    await eventually(
      async () =>
        expect(await gauges()).toEqual([
          { pending: 2, aged: true },
          { pending: 2, aged: true },
        ]),
      20_000,
      100,
    );
  } finally {
    for (const { relay, bus } of replicas) {
      await relay.stop();
      await bus.close().catch(() => undefined);
    }
  }
}, 60_000);
