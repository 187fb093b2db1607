/**
 * What the local database promises about a crash: an acknowledged write is in the data file before
 * the answer leaves (scripts/mongo-local commits each write). Killed with SIGKILL, the server gets no
 * chance to flush anything; after the restart every acknowledged write must be there.
 */
import { startDisposableMongo, type DisposableMongo } from '@affiliate/platform/testing';
import { statSync } from 'node:fs';
import mongoose from 'mongoose';

const WRITERS = 8;

let mongo: DisposableMongo;

beforeAll(async () => {
  mongo = await startDisposableMongo();
}, 90_000);
afterAll(async () => {
  await mongo?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('every write acknowledged before the database is killed with SIGKILL is there after the restart', async () => {
  const client = await mongoose.mongo.MongoClient.connect(mongo.url, {
    maxPoolSize: WRITERS,
    serverSelectionTimeoutMS: 2000,
    retryWrites: false,
  });
  const writes = client.db('durability').collection<{ _id: string; writer: number; n: number }>('writes');
  const acknowledged: string[] = [];
  let killed = false;
  const writer = async (index: number) => {
    for (let n = 0; !killed; n += 1) {
      const _id = `${index}-${n}`;
      try {
        await writes.insertOne({ _id, writer: index, n });
      } catch {
        return; // the server is gone: this write was never acknowledged
      }
      acknowledged.push(_id);
    }
  };
  const writing = Promise.all(Array.from({ length: WRITERS }, (_, index) => writer(index)));

  // Long enough for the background commit (about once a second) to leave a window behind it.
  while (acknowledged.length < 300) await sleep(50);
  await sleep(700);
  await mongo.kill();
  killed = true;
  await writing;
  await client.close(true);

  await mongo.start();
  const after = await mongoose.mongo.MongoClient.connect(mongo.url, { serverSelectionTimeoutMS: 10_000 });
  try {
    const stored = new Set(
      (
        await after
          .db('durability')
          .collection<{ _id: string }>('writes')
          .find({}, { projection: { _id: 1 } })
          .toArray()
      ).map((document) => document._id),
    );
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect({ acknowledged: acknowledged.length, lost }).toEqual({ acknowledged: acknowledged.length, lost: [] });
  } finally {
    await after.close();
  }
}, 120_000);

test('after a SIGKILL during writes, every stored document is found through its _id index and can be upserted again', async () => {
  const client = await mongoose.mongo.MongoClient.connect(mongo.url, {
    maxPoolSize: WRITERS,
    serverSelectionTimeoutMS: 2000,
    retryWrites: false,
  });
  const entries = client.db('durability').collection<{ _id: string; writer: number; n: number; key: string }>('entries');
  await entries.createIndex({ key: 1 }, { unique: true });
  let killed = false;
  let written = 0;
  // Upserts and inserts of documents with a second unique key: each writes the document and two index entries.
  const writer = async (index: number) => {
    for (let n = 0; !killed; n += 1) {
      try {
        await entries.updateOne({ _id: `${index}-${n}` }, { $setOnInsert: { writer: index, n, key: `k-${index}-${n}` } }, { upsert: true });
        written += 1;
      } catch {
        return;
      }
    }
  };
  const writing = Promise.all(Array.from({ length: WRITERS }, (_, index) => writer(index)));
  while (written < 300) await sleep(50);
  await sleep(700);
  await mongo.kill();
  killed = true;
  await writing;
  await client.close(true);

  await mongo.start();
  const after = await mongoose.mongo.MongoClient.connect(mongo.url, { serverSelectionTimeoutMS: 10_000 });
  try {
    const collection = after.db('durability').collection<{ _id: string; writer: number; n: number; key: string }>('entries');
    const stored = await collection.find({}).toArray();
    const problems: string[] = [];
    for (const document of stored) {
      // The same document through each unique index, and the upsert a redelivered event would repeat.
      if (!(await collection.findOne({ _id: document._id }))) problems.push(`${document._id}: not found by _id`);
      if (!(await collection.findOne({ key: document.key }))) problems.push(`${document._id}: not found by key`);
      await collection
        .updateOne({ _id: document._id }, { $setOnInsert: { key: document.key } }, { upsert: true })
        .catch((error: Error) => problems.push(`${document._id}: ${error.message}`));
    }
    expect({ stored: stored.length > 0, problems }).toEqual({ stored: true, problems: [] });
  } finally {
    await after.close();
  }
}, 120_000);

test('a large command the database is killed in the middle of is in the data file whole or not at all', async () => {
  // 4,000 documents of 8 KB in one insertMany: more unsaved data than H2's commit buffer (~19 MB), past
  // which H2 on its own would commit part of the command from inside the writing thread.
  const documents = Array.from({ length: 4000 }, (_, n) => ({ _id: `big-${n}`, key: `key-${n}`, padding: 'x'.repeat(8192) }));
  const client = await mongoose.mongo.MongoClient.connect(mongo.url, { serverSelectionTimeoutMS: 2000, retryWrites: false });
  const database = client.db('durability');
  type Big = { _id: string; key: string; padding: string };
  await database.collection<Big>('calibration').insertMany(documents.map((document) => ({ ...document })));
  const bulk = database.collection<Big>('bulk');
  await bulk.createIndex({ key: 1 }, { unique: true });

  // How long the same command takes whole, then the kill: as soon as anything of it reaches the data
  // file, or four fifths of the way through at the latest.
  const started = Date.now();
  await database.collection<Big>('calibration-2').insertMany(documents.map((document) => ({ ...document })));
  const whole = Date.now() - started;
  // Its modification time, not its size: H2 reuses the file's free space.
  const fileWritten = () => statSync(mongo.dataFile).mtimeMs;
  const writtenBefore = fileWritten();
  let acknowledged = false;
  const inserting = bulk.insertMany(documents.map((document) => ({ ...document }))).then(
    () => (acknowledged = true),
    () => undefined,
  );
  const begun = Date.now();
  while (!acknowledged && fileWritten() === writtenBefore && Date.now() - begun < whole * 0.8) await sleep(5);
  await mongo.kill();
  await inserting;
  await client.close(true);

  await mongo.start();
  const after = await mongoose.mongo.MongoClient.connect(mongo.url, { serverSelectionTimeoutMS: 10_000 });
  try {
    const collection = after.db('durability').collection<{ _id: string; key: string }>('bulk');
    const stored = await collection.find({}, { projection: { _id: 1, key: 1 } }).toArray();
    const unindexed = [];
    for (const document of stored) if (!(await collection.findOne({ key: document.key }))) unindexed.push(document._id);
    const expected = acknowledged ? [documents.length] : [0, documents.length];
    expect({
      stored: expected.includes(stored.length) ? 'whole or nothing' : `${stored.length} of ${documents.length}`,
      unindexed,
    }).toEqual({
      stored: 'whole or nothing',
      unindexed: [],
    });
  } finally {
    await after.close();
  }
}, 180_000);

test('a document of every kind of value, and the keys of a compound unique index, read back unchanged after a restart', async () => {
  const { Binary, Decimal128, Long, ObjectId } = mongoose.mongo;
  // The server stores documents and index keys in BSON (scripts/mongo-local): what comes back after
  // the data file is read again is what went in, type for type, and a key is still refused twice.
  const document = {
    _id: 'every-kind',
    text: 'déjà vu ✓',
    int: 42,
    long: Long.fromString('9007199254740993'),
    double: 0.1,
    decimal: Decimal128.fromString('1234.5678'),
    yes: true,
    nothing: null,
    date: new Date('2026-11-26T12:00:00.123Z'),
    objectId: new ObjectId('6b087faeb4f9e3a496921422'),
    uuid: new Binary(Buffer.from('0123456789abcdef0123456789abcdef', 'hex'), Binary.SUBTYPE_UUID),
    bytes: new Binary(Buffer.from([0, 1, 2, 255])),
    list: [1, 'two', { three: [3] }],
    nested: { a: { b: { c: 'd' } } },
    account: { programId: 'p-1', email: 'sam@example.com' },
  };
  const client = await mongoose.mongo.MongoClient.connect(mongo.url, { serverSelectionTimeoutMS: 2000 });
  const kinds = client.db('durability').collection<typeof document>('kinds');
  await kinds.createIndex({ 'account.programId': 1, 'account.email': 1 }, { unique: true });
  await kinds.insertOne(document);
  await client.close();

  await mongo.stop();
  await mongo.start();
  const after = await mongoose.mongo.MongoClient.connect(mongo.url, { serverSelectionTimeoutMS: 10_000 });
  try {
    const collection = after.db('durability').collection<typeof document>('kinds');
    const duplicate = await collection.insertOne({ ...document, _id: 'same-account' }).then(
      () => 'stored',
      (error: { code?: number }) => error.code,
    );
    expect({
      read: await collection.findOne({ _id: 'every-kind' }, { promoteLongs: false }),
      byIndex: (await collection.findOne({ 'account.programId': 'p-1', 'account.email': 'sam@example.com' }))?._id,
      duplicate,
    }).toEqual({ read: document, byIndex: 'every-kind', duplicate: 11000 });
  } finally {
    await after.close();
  }
}, 120_000);
