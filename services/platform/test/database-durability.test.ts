/**
 * What the local database promises about a crash: an acknowledged write is in the data file before
 * the answer leaves (scripts/mongo-local commits each write). Killed with SIGKILL, the server gets no
 * chance to flush anything; after the restart every acknowledged write must be there.
 */
import { startDisposableMongo, type DisposableMongo } from '@affiliate/platform/testing';
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
  const client = await mongoose.mongo.MongoClient.connect(mongo.url, { maxPoolSize: WRITERS, serverSelectionTimeoutMS: 2000, retryWrites: false });
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
    const stored = new Set((await after.db('durability').collection<{ _id: string }>('writes').find({}, { projection: { _id: 1 } }).toArray()).map((document) => document._id));
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect({ acknowledged: acknowledged.length, lost }).toEqual({ acknowledged: acknowledged.length, lost: [] });
  } finally {
    await after.close();
  }
}, 120_000);

test('after a SIGKILL during writes, every stored document is found through its _id index and can be upserted again', async () => {
  const client = await mongoose.mongo.MongoClient.connect(mongo.url, { maxPoolSize: WRITERS, serverSelectionTimeoutMS: 2000, retryWrites: false });
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
      await collection.updateOne({ _id: document._id }, { $setOnInsert: { key: document.key } }, { upsert: true }).catch((error: Error) => problems.push(`${document._id}: ${error.message}`));
    }
    expect({ stored: stored.length > 0, problems }).toEqual({ stored: true, problems: [] });
  } finally {
    await after.close();
  }
}, 120_000);
