/**
 * The database guarantees the code relies on, each asserted exactly under concurrency. They run
 * against whatever MONGO_URL points at (the local mongo-java-server in CI, a real MongoDB
 * elsewhere), so this file is also the list of what a replacement server must provide.
 *
 * Deliberately absent: the document `findOneAndUpdate` returns with `returnDocument: 'after'`. On
 * the local server it is read after the lock is released and may carry another caller's later
 * state, so no code takes an identity or a decision from it (eslint forbids it; DESIGN.md §8).
 */
import { randomUUID } from 'node:crypto';
import { isDuplicateKey } from '@affiliate/platform';
import { testInfra, uniqueName } from '@affiliate/platform/testing';
import mongoose, { type Connection } from 'mongoose';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- schemaless documents; each test asserts their shape
type Doc = { _id: string; [field: string]: any };

const CALLERS = 50;
const ROUNDS = 5;

let connection: Connection;

beforeAll(async () => {
  // A pool as large as the callers, so the 50 operations really are in flight at the same time.
  connection = await mongoose
    .createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_guarantees'), maxPoolSize: CALLERS })
    .asPromise();
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

const collection = (name: string) => connection.db!.collection<Doc>(uniqueName(name));
const times = <T>(n: number, run: (index: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, index) => run(index)));

/** Runs every caller, and sorts what came back into results and duplicate-key failures (anything else fails the test). */
async function settle<T>(n: number, run: (index: number) => Promise<T>): Promise<{ results: T[]; duplicates: number }> {
  const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, index) => run(index)));
  const results: T[] = [];
  let duplicates = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') results.push(outcome.value);
    else if (isDuplicateKey(outcome.reason)) duplicates += 1;
    else throw outcome.reason;
  }
  return { results, duplicates };
}

test('a conditional update under 50-way concurrency applies exactly as often as its condition allows, and says so', async () => {
  // Redemption limits: `timesRedeemed < max` in the filter, `$inc` in the update, modifiedCount as the verdict.
  for (let round = 0; round < ROUNDS; round += 1) {
    const counters = collection('conditional');
    await counters.insertOne({ _id: 'code', timesRedeemed: 0 });
    const results = await times(CALLERS, () =>
      counters.updateOne({ _id: 'code', timesRedeemed: { $lt: 10 } }, { $inc: { timesRedeemed: 1 } }),
    );
    expect(results.filter((result) => result.modifiedCount === 1)).toHaveLength(10);
    expect(results.filter((result) => result.modifiedCount === 0)).toHaveLength(CALLERS - 10);
    expect(await counters.findOne({ _id: 'code' })).toMatchObject({ timesRedeemed: 10 });
  }
});

test('of 50 writers that read the same revision, exactly one revision-checked write lands', async () => {
  // The outbox's read-compute-write: `updateOne({_id, revision: r}, {$set: {revision: r + 1, ...}})`.
  for (let round = 0; round < ROUNDS; round += 1) {
    const documents = collection('revision');
    await documents.insertOne({ _id: 'aggregate', revision: 0, writer: null });
    const results = await times(CALLERS, (writer) =>
      documents.updateOne({ _id: 'aggregate', revision: 0 }, { $set: { revision: 1, writer } }),
    );
    const winners = results.flatMap((result, writer) => (result.modifiedCount === 1 ? [writer] : []));
    expect(winners).toHaveLength(1);
    expect(await documents.findOne({ _id: 'aggregate' })).toMatchObject({ revision: 1, writer: winners[0] });
  }
});

test('of 50 simultaneous inserts of one unique key, exactly one succeeds and every other fails as a duplicate key', async () => {
  // Event claims, idempotency keys, codes and slugs: a unique insert decides who goes first.
  const indexes: Record<string, 1>[] = [{ key: 1 }, { programId: 1, key: 1 }];
  for (const keys of indexes) {
    const claims = collection('unique');
    await claims.createIndex(keys, { unique: true });
    const { results, duplicates } = await settle(CALLERS, (caller) =>
      claims.insertOne({ _id: randomUUID(), programId: 'p', key: 'k', caller }),
    );
    expect(results).toHaveLength(1);
    expect(duplicates).toBe(CALLERS - 1);
    expect(await claims.countDocuments({})).toBe(1);
  }
});

test('50 simultaneous upserts of one _id leave one document, and every failure is a duplicate key', async () => {
  // Counters and read models created by their first event: a lost upsert race is a duplicate-key error, never a second document.
  for (let round = 0; round < ROUNDS; round += 1) {
    const counters = collection('upsert');
    const { results, duplicates } = await settle(CALLERS, () =>
      counters.updateOne({ _id: 'program' }, { $inc: { seen: 1 } }, { upsert: true }),
    );
    const document = await counters.findOne({ _id: 'program' });
    expect(await counters.countDocuments({})).toBe(1);
    expect(document?.seen).toBe(results.length);
    expect(results.length + duplicates).toBe(CALLERS);
  }
});

test('a conditional upsert that does not match the existing document fails as a duplicate key and changes nothing', async () => {
  // Older events for link statistics and program settings are dropped this way.
  const entries = collection('stale-upsert');
  await entries.createIndex({ programId: 1, sourceId: 1 }, { unique: true });
  await entries.insertOne({ _id: 'entry', programId: 'p', sourceId: 's', version: 5 });
  const stale = await entries
    .updateOne({ programId: 'p', sourceId: 's', version: { $lt: 3 } }, { $set: { version: 3 } }, { upsert: true })
    .catch((error: unknown) => error);
  expect(isDuplicateKey(stale)).toBe(true);
  expect(await entries.find({}).toArray()).toEqual([{ _id: 'entry', programId: 'p', sourceId: 's', version: 5 }]);
});

test('findOneAndUpdate returning the document before the change hands each of 50 concurrent callers its own pre-image', async () => {
  // Click ids: the counter's value before the caller's own $inc, plus one. The counter starts
  // missing, as a program's does before its first click, so the upsert race is covered too.
  const nextValue = async (counters: ReturnType<typeof collection>): Promise<number> => {
    for (;;) {
      try {
        const before = await counters.findOneAndUpdate(
          { _id: 'program' },
          { $inc: { last: 1 } },
          { upsert: true, returnDocument: 'before' },
        );
        return ((before?.last as number | undefined) ?? 0) + 1;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    }
  };
  for (let round = 0; round < ROUNDS; round += 1) {
    const counters = collection('pre-image');
    const values = await times(CALLERS, () => nextValue(counters));
    expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: CALLERS }, (_, index) => index + 1));
    expect(await counters.findOne({ _id: 'program' })).toMatchObject({ last: CALLERS });
  }
});

test('findOneAndDelete hands the document to exactly one of 50 concurrent callers', async () => {
  // Releasing a redemption and deleting an endpoint: whoever got the document does the follow-up, once.
  for (let round = 0; round < ROUNDS; round += 1) {
    const redemptions = collection('delete');
    await redemptions.insertOne({ _id: 'redemption', state: 'applied' });
    const taken = await times(CALLERS, () => redemptions.findOneAndDelete({ _id: 'redemption', state: 'applied' }));
    expect(taken.filter((document) => document !== null)).toEqual([{ _id: 'redemption', state: 'applied' }]);
    expect(await redemptions.countDocuments({})).toBe(0);
  }
});

test('a conditional deleteOne reports the removal to exactly one of 50 concurrent callers', async () => {
  // Taking over an abandoned idempotency key, releasing a claim.
  const claims = collection('delete-one');
  await claims.insertOne({ _id: 'claim', state: 'processing' });
  const results = await times(CALLERS, () => claims.deleteOne({ _id: 'claim', state: 'processing' }));
  expect(results.filter((result) => result.deletedCount === 1)).toHaveLength(1);
});

test('a $push guarded by $ne adds one key once, whatever the number of concurrent callers', async () => {
  // Redemption keys travel with their increment, so a retried count is a no-op.
  const counters = connection.db!.collection<{ _id: string; timesRedeemed: number; keys: string[] }>(uniqueName('guarded-push'));
  await counters.insertOne({ _id: 'code', timesRedeemed: 0, keys: [] });
  const results = await times(CALLERS, () =>
    counters.updateOne({ _id: 'code', keys: { $ne: 'sale-1' } }, { $inc: { timesRedeemed: 1 }, $push: { keys: 'sale-1' } }),
  );
  expect(results.filter((result) => result.modifiedCount === 1)).toHaveLength(1);
  expect(await counters.findOne({ _id: 'code' })).toMatchObject({ timesRedeemed: 1, keys: ['sale-1'] });
});

test('a $push $each guarded by $nin adds a batch of keys whole and once, with its $inc by their number, however many overlapping batches race', async () => {
  // Redemptions of one code counted together: one write per batch, no key counted twice, the count the number of keys.
  const counters = connection.db!.collection<{ _id: string; timesRedeemed: number; keys: string[] }>(uniqueName('guarded-batch-push'));
  await counters.insertOne({ _id: 'code', timesRedeemed: 0, keys: [] });
  // Caller i counts sale-i and sale-(i+1): each batch overlaps its neighbours'.
  const batches = Array.from({ length: CALLERS }, (_, index) => [`sale-${index}`, `sale-${index + 1}`]);
  const results = await times(CALLERS, (index) => {
    const keys = batches[index]!;
    return counters.updateOne(
      { _id: 'code', keys: { $nin: keys } },
      { $inc: { timesRedeemed: keys.length }, $push: { keys: { $each: keys } } },
    );
  });
  const stored = (await counters.findOne({ _id: 'code' }))!;
  const landed = batches.filter((_, index) => results[index]!.modifiedCount === 1);
  expect(landed.length).toBeGreaterThan(0);
  expect(stored.keys).toHaveLength(new Set(stored.keys).size);
  expect(stored.timesRedeemed).toBe(stored.keys.length);
  expect([...stored.keys].sort()).toEqual(landed.flat().sort());

  // And a $pull with $in takes exactly those keys out (the keys forgotten once their redemptions are applied).
  const forgotten = landed[0]!;
  await counters.updateOne({ _id: 'code' }, { $pull: { keys: { $in: forgotten } } });
  expect([...(await counters.findOne({ _id: 'code' }))!.keys].sort()).toEqual(
    landed
      .flat()
      .filter((key) => !forgotten.includes(key))
      .sort(),
  );
});

test('of 50 concurrent lease claims exactly one reports a modification, and a read by _id shows its lock token', async () => {
  // Webhook deliveries: the claim is the conditional update; the token read back confirms whose it is.
  for (let round = 0; round < ROUNDS; round += 1) {
    const deliveries = collection('lease');
    await deliveries.insertOne({ _id: 'delivery', lockedUntil: new Date(0), lockToken: null });
    const now = new Date();
    const tokens = Array.from({ length: CALLERS }, () => randomUUID());
    const results = await times(CALLERS, (caller) =>
      deliveries.updateOne(
        { _id: 'delivery', lockedUntil: { $lte: now } },
        { $set: { lockedUntil: new Date(now.getTime() + 60_000), lockToken: tokens[caller] } },
      ),
    );
    const winners = tokens.filter((_, caller) => results[caller]?.modifiedCount === 1);
    expect(winners).toHaveLength(1);
    expect(await deliveries.findOne({ _id: 'delivery' })).toMatchObject({ lockToken: winners[0] });
  }
});

test('matchedCount says whether a conditional update found its document, also when the update changed nothing', async () => {
  // A payout run extends its lease only while it holds the token; revoking a key twice is not "not found".
  const leases = collection('matched');
  const until = new Date(Date.now() + 60_000);
  await leases.insertOne({ _id: 'run', holder: 'holder', until });
  const results = await times(CALLERS, (caller) =>
    leases.updateOne({ _id: 'run', holder: caller % 2 === 0 ? 'holder' : 'someone-else' }, { $set: { until } }),
  );
  expect(results.map((result) => result.matchedCount)).toEqual(Array.from({ length: CALLERS }, (_, caller) => (caller % 2 === 0 ? 1 : 0)));
  expect(results.every((result) => result.modifiedCount === 0)).toBe(true);
});
