import { randomUUID } from 'node:crypto';
import { exampleEventData, type EventEnvelope } from '@affiliate/contracts';
import { AggregateStore, createEvent, outboxPlugin, type Decide, type OutboxFields } from '@affiliate/platform';
import { newProgramId, testInfra, uniqueName } from '@affiliate/platform/testing';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';

/**
 * The store's batch writes (issue 29, payout runs): `insertAll` stores many new documents in one
 * write, `changeEach` changes many in one read and one bulk write, each revision-checked and with
 * its own events, and decides again, one at a time, when a write came between its read and its own.
 */
type Widget = { _id: string; programId: string; name: string; createdAt: Date } & Partial<OutboxFields>;

let connection: Connection;
let model: Model<Widget>;
let widgets: AggregateStore<Widget>;

beforeAll(async () => {
  connection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_store_each') }).asPromise();
  const schema = new Schema<Widget>({ _id: String, programId: String, name: String, createdAt: Date });
  schema.plugin(outboxPlugin);
  model = connection.model<Widget>('Widget', schema);
  await model.init();
  widgets = new AggregateStore<Widget>({ connection }, () => model);
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

const updated = (widget: Widget): EventEnvelope[] => [
  createEvent('coupon.updated', widget.programId, { ...exampleEventData('coupon.updated', { id: widget._id }), name: widget.name }),
];

async function insertWidgets(programId: string, names: string[]): Promise<string[]> {
  const documents = names.map((name) => ({ _id: randomUUID(), programId, name, createdAt: new Date() }));
  await widgets.insertAll(documents, (widget) => [
    createEvent('coupon.created', programId, exampleEventData('coupon.created', { id: widget._id })),
  ]);
  return documents.map((document) => document._id);
}

/** What is stored, the outbox too (no relay runs here, so the events wait in it). */
async function stored(id: string): Promise<Widget & { _outbox: EventEnvelope[]; revision: number }> {
  return (await model.collection.findOne({ _id: id as never })) as never;
}

/** Marks a widget once: a widget marked already is left as it is (what changeEach asks of `decide`). */
const markOnce: Decide<Widget> = (current) =>
  current.name.endsWith('+marked') ? null : { set: { name: `${current.name}+marked` }, events: updated };

test("insertAll stores every document with its events; changeEach changes each of the program's documents with its own events stamped with its revision, and leaves what decide leaves and another program's", async () => {
  const [programId, other] = [newProgramId(), newProgramId()];
  const ids = await insertWidgets(programId, ['a', 'b', 'c+marked']);
  const [foreign] = await insertWidgets(other, ['d']);
  for (const id of [...ids, foreign!]) expect((await stored(id))._outbox.map((event) => event.type)).toEqual(['coupon.created']);

  await widgets.changeEach(programId, [...ids, foreign!], markOnce);

  const [a, b, c, d] = await Promise.all([...ids, foreign!].map(stored));
  expect([a!.name, b!.name, c!.name, d!.name]).toEqual(['a+marked', 'b+marked', 'c+marked', 'd']);
  for (const widget of [a!, b!]) {
    expect(widget.revision).toBe(1);
    expect(widget._outbox.map((event) => [event.type, event.revision])).toEqual([
      ['coupon.created', 0],
      ['coupon.updated', 1],
    ]);
    expect(widget._outbox[1]?.data.name).toBe(widget.name);
  }
  expect([c!.revision, d!.revision]).toEqual([0, 0]);
});

test("a document written between changeEach's read and its write is decided again on what that write left: no change lost, none made twice", async () => {
  const programId = newProgramId();
  const ids = await insertWidgets(programId, ['e', 'f', 'g']);
  let raced = false;
  await widgets.changeEach(programId, ids, async (current) => {
    // Another writer renames f after the batch read it and before the batch writes.
    if (current._id === ids[1] && !raced) {
      raced = true;
      await widgets.change(programId, current._id, (fresh) => ({
        set: { name: 'renamed' },
        events: () => updated({ ...fresh, name: 'renamed' }),
      }));
    }
    return markOnce(current);
  });

  const [e, f, g] = await Promise.all(ids.map(stored));
  expect([e!.name, f!.name, g!.name]).toEqual(['e+marked', 'renamed+marked', 'g+marked']);
  const changes = f!._outbox.filter((event) => event.type === 'coupon.updated');
  expect(changes.map((event) => [event.revision, event.data.name])).toEqual([
    [1, 'renamed'],
    [2, 'renamed+marked'],
  ]);
  for (const widget of [e!, g!]) expect(widget._outbox.map((event) => event.revision)).toEqual([0, 1]);
});

test("changeEach answers the ids whose decision is what is stored, changed or left as they were; not a missing id nor another program's", async () => {
  const [programId, other] = [newProgramId(), newProgramId()];
  const ids = await insertWidgets(programId, ['h', 'i+marked']);
  const [foreign] = await insertWidgets(other, ['j']);
  const missing = randomUUID();

  const settled = await widgets.changeEach(programId, [...ids, foreign!, missing], markOnce);

  expect([...settled].sort()).toEqual([...ids].sort());
});

test("a document removed between changeEach's read and its write is not answered: its caller learns that what it decided did not happen", async () => {
  const programId = newProgramId();
  const ids = await insertWidgets(programId, ['k', 'l', 'm']);
  let removed = false;
  const settled = await widgets.changeEach(programId, ids, async (current) => {
    // Another request removes l after the batch read it and before the batch writes.
    if (current._id === ids[1] && !removed) {
      removed = true;
      await widgets.remove(programId, current._id, () => []);
    }
    return markOnce(current);
  });

  expect([...settled].sort()).toEqual([ids[0], ids[2]].sort());
  const [k, l, m] = await Promise.all(ids.map(stored));
  expect([k!.name, l!.name, m!.name]).toEqual(['k+marked', 'l', 'm+marked']);
  expect(await widgets.byId(programId, ids[1]!)).toBeNull();
});
