/**
 * What group commit relies on (click intake writes a batch of clicks in one command per collection),
 * asserted under concurrency against whatever MONGO_URL points at, like database-guarantees.test.ts.
 */
import { insertEach, isDuplicateKey, SharedInserts, writeErrorsOf } from '@affiliate/platform';
import { testInfra, uniqueName } from '@affiliate/platform/testing';
import type { CommandStartedEvent } from 'mongodb';
import mongoose, { Schema, type Connection } from 'mongoose';

type Claim = { _id: string; writer: number };

const WRITERS = 20;
const ROUNDS = 3;

let connection: Connection;

beforeAll(async () => {
  connection = await mongoose
    .createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_group_commit'), maxPoolSize: WRITERS, monitorCommands: true })
    .asPromise();
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

/** A collection of its own, made (with its indexes) before the first write, not beside it. */
async function claimModel(name: string) {
  const model = connection.model<Claim>(name, new Schema<Claim>({ _id: String, writer: Number }, { versionKey: false }), uniqueName(name));
  await model.init();
  return model;
}

test('unordered inserts of overlapping batches: each id lands once, and each batch learns exactly which of its documents landed', async () => {
  for (let round = 0; round < ROUNDS; round += 1) {
    const claims = await claimModel(`claims_${round}`);
    await claims.collection.insertOne({ _id: 'taken-before' as never, writer: -1 });
    // Every writer inserts 30 ids, most of them shared with the others, plus the one taken before.
    const batchOf = (writer: number) => [
      ...Array.from({ length: 30 }, (_, index) => ({ _id: `claim-${(writer * 7 + index) % 60}`, writer })),
      { _id: 'taken-before', writer },
    ];
    const outcomes = await Promise.all(Array.from({ length: WRITERS }, (_, writer) => insertEach(claims, batchOf(writer))));
    const stored = await claims.find({}).lean();
    const owner = new Map(stored.map((claim) => [claim._id, claim.writer]));
    expect(owner.size).toBe(61);
    outcomes.forEach((landed, writer) => {
      // A document "landed" exactly when the stored one is this writer's.
      expect(landed).toEqual(batchOf(writer).map((claim) => owner.get(claim._id) === writer));
    });
    // Each id that was claimed by anyone was claimed by exactly one writer.
    const wins = outcomes.flatMap((landed, writer) =>
      batchOf(writer)
        .filter((_, index) => landed[index])
        .map((claim) => claim._id),
    );
    expect(wins).toHaveLength(new Set(wins).size);
    expect(new Set(wins).size).toBe(60);
  }
});

test('an _id $in read finds exactly the documents named', async () => {
  const claims = await claimModel('claims_in');
  await claims.collection.insertMany(Array.from({ length: 50 }, (_, index) => ({ _id: `claim-${index}` as never, writer: index })));
  const found = await claims.collection.find({ _id: { $in: ['claim-3', 'claim-49', 'claim-50', 'nothing'] } as never }).toArray();
  expect(found.map((claim) => claim._id).sort()).toEqual(['claim-3', 'claim-49']);
});

test('concurrent unordered bulk upserts that $push: a losing upsert fails at its own index as a duplicate key, never as a second document, and the others of its command apply', async () => {
  for (let round = 0; round < ROUNDS; round += 1) {
    const visitors = connection.db!.collection<{ _id: string; clicks: number[] }>(uniqueName(`visitors_${round}`));
    // Every writer adds its click to 5 visitors' documents that do not exist yet, each twice in one command.
    const operationsOf = (writer: number) =>
      [0, 1, 2, 3, 4, 0, 1, 2, 3, 4].map((visitor, index) => ({
        updateOne: { filter: { _id: `visitor-${visitor}` }, update: { $push: { clicks: writer * 100 + index } }, upsert: true },
      }));
    const lost = await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        try {
          await visitors.bulkWrite(operationsOf(writer), { ordered: false });
          return [];
        } catch (error) {
          const failed = writeErrorsOf(error);
          expect(failed.every((write) => isDuplicateKey(write))).toBe(true);
          return failed.map((write) => writer * 100 + write.index);
        }
      }),
    );
    const stored = await visitors.find({}).toArray();
    expect(stored.map((visitor) => visitor._id).sort()).toEqual(['visitor-0', 'visitor-1', 'visitor-2', 'visitor-3', 'visitor-4']);
    // Every click is in its visitor's document once, except exactly the ones reported as failed.
    const kept = stored.flatMap((visitor) => visitor.clicks).sort((a, b) => a - b);
    const all = Array.from({ length: WRITERS }, (_, writer) => Array.from({ length: 10 }, (__, index) => writer * 100 + index)).flat();
    const failed = new Set(lost.flat());
    expect(kept).toEqual(all.filter((click) => !failed.has(click)));
  }
});

test('an unordered bulkWrite of conditional updateOnes reports in modifiedCount exactly how many of them applied, under concurrency', async () => {
  for (let round = 0; round < ROUNDS; round += 1) {
    // As webhook attempts are appended in batches: each update holds only while its lease (here, the
    // document still free) holds, and pushes to a capped log.
    const leases = connection.db!.collection<{ _id: string; holder: number | null; log: number[] }>(uniqueName(`leases_${round}`));
    await leases.insertMany(Array.from({ length: 40 }, (_, index) => ({ _id: `lease-${index}`, holder: null, log: [] })));
    // Every writer takes 15 leases, most of them wanted by others too, plus one that does not exist.
    const wantedBy = (writer: number) => [...Array.from({ length: 15 }, (_, index) => `lease-${(writer * 3 + index) % 40}`), 'lease-none'];
    const modified = await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        const result = await leases.bulkWrite(
          wantedBy(writer).map((id) => ({
            updateOne: {
              filter: { _id: id, holder: null },
              update: { $set: { holder: writer }, $push: { log: { $each: [writer], $slice: -5 } } },
            },
          })),
          { ordered: false },
        );
        return result.modifiedCount;
      }),
    );
    const stored = await leases.find({}).toArray();
    modified.forEach((count, writer) => {
      expect({ writer, modified: count }).toEqual({ writer, modified: stored.filter((lease) => lease.holder === writer).length });
    });
    // Each lease wanted by anyone was taken by exactly one writer, which alone logged it.
    expect(stored.filter((lease) => lease.holder !== null).every((lease) => lease.log.length === 1 && lease.log[0] === lease.holder)).toBe(
      true,
    );
    expect(modified.reduce((sum, count) => sum + count, 0)).toBe(stored.filter((lease) => lease.holder !== null).length);
  }
});

test('shared inserts: callers side by side share one command, each learns which of its own documents landed, and of two callers inserting one id exactly one does', async () => {
  const claims = await claimModel('shared_claims');
  await claims.collection.insertOne({ _id: 'taken-before' as never, writer: -1 });
  const inserts = new SharedInserts(claims, { maxBatch: 200, maxInFlight: 1 });
  const commands: string[] = [];
  const client = connection.getClient();
  const seen = (event: CommandStartedEvent) => {
    if (event.commandName === 'insert') commands.push(event.commandName);
  };
  client.on('commandStarted', seen);
  try {
    // Ten callers in one turn: each its own id, the first five also one id they all want, and one taken before.
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, writer) =>
        writer < 5
          ? inserts.insertEach('program', [
              { _id: `own-${writer}`, writer },
              { _id: 'wanted', writer },
              { _id: 'taken-before', writer },
            ])
          : inserts.insertOnce('program', { _id: `own-${writer}`, writer }).then((landed) => [landed]),
      ),
    );
    expect(commands).toEqual(['insert']);
    const owner = new Map((await claims.find({}).lean()).map((claim) => [claim._id, claim.writer]));
    outcomes.forEach((landed, writer) => expect(landed[0]).toBe(owner.get(`own-${writer}`) === writer));
    expect(outcomes.every((landed) => landed[0])).toBe(true);
    const wanted = outcomes.slice(0, 5).map((landed) => landed[1]);
    expect(wanted.filter(Boolean)).toHaveLength(1);
    expect(owner.get('wanted')).toBe(wanted.indexOf(true));
    expect(outcomes.slice(0, 5).map((landed) => landed[2])).toEqual([false, false, false, false, false]);
  } finally {
    client.off('commandStarted', seen);
  }
});

test('shared inserts: a document the database refuses (not for a taken key) fails its own caller only, and the others of its command land', async () => {
  const claims = await claimModel('shared_refused');
  const inserts = new SharedInserts(claims, { maxBatch: 200, maxInFlight: 1 });
  const commands: string[] = [];
  const seen = (event: CommandStartedEvent) => {
    if (event.commandName === 'insert') commands.push(event.commandName);
  };
  connection.getClient().on('commandStarted', seen);
  const outcomes = await Promise.allSettled([
    inserts.insertOnce('program', { _id: 'before', writer: 1 }),
    // An array is no _id: the server refuses this one document (code 53 locally, 2 on MongoDB).
    inserts.insertOnce('program', { _id: ['not', 'an', 'id'] as never, writer: 2 }),
    inserts.insertEach('program', [
      { _id: 'after-1', writer: 3 },
      { _id: 'after-2', writer: 3 },
    ]),
  ]);
  connection.getClient().off('commandStarted', seen);
  expect(commands).toEqual(['insert']);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(outcomes[0]).toEqual({ status: 'fulfilled', value: true });
  expect(outcomes[2]).toEqual({ status: 'fulfilled', value: [true, true] });
  expect((await claims.find({}).lean()).map((claim) => claim._id).sort()).toEqual(['after-1', 'after-2', 'before']);
});

test('shared inserts: a document the driver will not send (past 16 MB) fails its own caller only, and the others land', async () => {
  const claims = await claimModel('shared_too_large');
  const inserts = new SharedInserts(claims, { maxBatch: 200, maxInFlight: 1 });
  const tooLarge = { _id: 'too-large', writer: 2, padding: 'x'.repeat(17 * 1024 * 1024) } as Claim;
  const outcomes = await Promise.allSettled([
    inserts.insertOnce('program', { _id: 'small-1', writer: 1 }),
    inserts.insertOnce('program', tooLarge),
    inserts.insertOnce('program', { _id: 'small-2', writer: 3 }),
  ]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((await claims.find({}).lean()).map((claim) => claim._id).sort()).toEqual(['small-1', 'small-2']);
});
