import { randomUUID } from 'node:crypto';
import { exampleEventData } from '@affiliate/contracts';
import { AggregateStore, createEvent, outboxPlugin, programKey, UniqueKeyConflict, type OutboxFields } from '@affiliate/platform';
import { newProgramId, testInfra, uniqueName } from '@affiliate/platform/testing';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';

type Widget = { _id: string; programId: string; name: string; nameKey: string; createdAt: Date } & Partial<OutboxFields>;

let connection: Connection;
let widgets: WidgetStore;

/** A repository as a service writes one: the store plus a lookup by its program-embedding key. */
class WidgetStore extends AggregateStore<Widget> {
  constructor(model: Model<Widget>) {
    super({ connection }, () => model, { uniqueKeys: ['nameKey'] });
  }

  byName(programId: string, name: string) {
    return this.byKey(programId, 'nameKey', programKey(programId, name));
  }
}

beforeAll(async () => {
  connection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_store') }).asPromise();
  const schema = new Schema<Widget>({
    _id: String,
    programId: String,
    name: String,
    nameKey: { type: String, unique: true },
    createdAt: Date,
  });
  schema.plugin(outboxPlugin);
  const model = connection.model<Widget>('Widget', schema);
  await model.init();
  widgets = new WidgetStore(model);
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

const created = (programId: string, id: string) => [createEvent('coupon.created', programId, exampleEventData('coupon.created', { id }))];

async function insertWidget(programId: string, name: string): Promise<string> {
  const id = randomUUID();
  await widgets.insert({ _id: id, programId, name, nameKey: programKey(programId, name), createdAt: new Date() }, () =>
    created(programId, id),
  );
  return id;
}

test('a document is found by id and by key only within its own program', async () => {
  const [programId, other] = [newProgramId(), newProgramId()];
  const id = await insertWidget(programId, 'gear');
  expect((await widgets.byId(programId, id))?.name).toBe('gear');
  expect((await widgets.byName(programId, 'gear'))?._id).toBe(id);
  expect(await widgets.byId(other, id)).toBeNull();
  expect(await widgets.byName(other, 'gear')).toBeNull();
  // The same value in another program is another key.
  await insertWidget(other, 'gear');
});

test('a taken unique key is one typed conflict, on insert and on change, naming the key', async () => {
  const programId = newProgramId();
  await insertWidget(programId, 'bolt');
  const nut = await insertWidget(programId, 'nut');
  const onInsert = await insertWidget(programId, 'bolt').catch((error: unknown) => error);
  const onChange = await widgets
    .change(programId, nut, () => ({ set: { name: 'bolt', nameKey: programKey(programId, 'bolt') }, events: () => [] }))
    .catch((error: unknown) => error);
  for (const error of [onInsert, onChange]) {
    expect(error).toBeInstanceOf(UniqueKeyConflict);
    expect(error).toMatchObject({ key: 'nameKey', status: 409 });
  }
  expect((await widgets.byId(programId, nut))?.name).toBe('nut');
});

test('a removed document is gone from every read at once and its unique key is free again', async () => {
  const programId = newProgramId();
  const id = await insertWidget(programId, 'spring');
  expect(await widgets.remove(programId, id, () => [createEvent('coupon.deleted', programId, { id })])).not.toBeNull();
  expect(await widgets.byId(programId, id)).toBeNull();
  expect(await widgets.byName(programId, 'spring')).toBeNull();
  const again = await insertWidget(programId, 'spring');
  expect((await widgets.byName(programId, 'spring'))?._id).toBe(again);
  expect(await widgets.remove(programId, id, () => [])).toBeNull();
});

test("cached reads serve what this process read a moment ago, and this store's own writes take effect on them at once", async () => {
  /** The same collection through a store that keeps reads for a minute (far longer than the test). */
  class CachedWidgetStore extends AggregateStore<Widget> {
    constructor(model: Model<Widget>) {
      super({ connection }, () => model, { uniqueKeys: ['nameKey'], cacheReadsForMs: 60_000 });
    }

    byNameCached(programId: string, name: string) {
      return this.byKeyCached(programId, 'nameKey', programKey(programId, name));
    }
  }
  const cached = new CachedWidgetStore(connection.model<Widget>('Widget'));
  const programId = newProgramId();
  const id = randomUUID();
  await cached.insert({ _id: id, programId, name: 'cog', nameKey: programKey(programId, 'cog'), createdAt: new Date() }, () => []);
  expect((await cached.byNameCached(programId, 'cog'))?._id).toBe(id);
  expect((await cached.byIdCached(programId, id))?.name).toBe('cog');

  // Another process's write (here: the uncached store) is not seen until the entries expire...
  await widgets.change(programId, id, () => ({ set: { name: 'sprocket' }, events: () => [] }));
  expect((await cached.byIdCached(programId, id))?.name).toBe('cog');
  // ...this store's own writes are, at once, and so is a removal.
  await cached.change(programId, id, () => ({ set: { name: 'gear wheel' }, events: () => [] }));
  expect((await cached.byIdCached(programId, id))?.name).toBe('gear wheel');
  expect(await cached.remove(programId, id, () => [])).not.toBeNull();
  expect(await cached.byIdCached(programId, id)).toBeNull();
  expect(await cached.byNameCached(programId, 'cog')).toBeNull();
});

test('the events about the document written carry its revision, an *.updated one the fields the change altered with their old values, and events about another object neither', async () => {
  const programId = newProgramId();
  const id = await insertWidget(programId, 'cog');
  const otherId = randomUUID();
  const events = (widget: Widget) => [
    createEvent('coupon.updated', programId, exampleEventData('coupon.updated', { id, name: widget.name })),
    createEvent('coupon.updated', programId, exampleEventData('coupon.updated', { id: otherId, name: widget.name })),
  ];
  await widgets.change(programId, id, () => ({ set: { name: 'sprocket', nameKey: programKey(programId, 'sprocket') }, events }));
  await widgets.change(programId, id, () => ({ set: { name: 'sprocket' }, events }));

  const outbox = ((await connection.collection('widgets').findOne({ _id: id as never })) as unknown as OutboxFields)._outbox;
  expect(outbox.map((event) => [event.type, event.data.id === id ? 'own' : 'other', event.revision, event.previousAttributes])).toEqual([
    ['coupon.created', 'own', 0, undefined],
    ['coupon.updated', 'own', 1, { name: 'cog' }],
    ['coupon.updated', 'other', undefined, undefined],
    // A change that alters nothing the event shows lists nothing.
    ['coupon.updated', 'own', 2, {}],
    ['coupon.updated', 'other', undefined, undefined],
  ]);
});

test('previousAttributes compares with the events a change builds for the state before when it gives them (what it shows beside the document changed too)', async () => {
  const programId = newProgramId();
  const id = await insertWidget(programId, 'cog');
  // The event shows a part read beside the document (as an affiliate shows its links), which changed with it.
  const shown = (widget: Widget, part: string) => [
    createEvent('coupon.updated', programId, exampleEventData('coupon.updated', { id, name: widget.name, externalId: part })),
  ];
  await widgets.change(programId, id, () => ({
    set: { name: 'sprocket' },
    events: (next) => shown(next, 'new part'),
    previous: (current) => shown(current, 'old part'),
  }));

  const outbox = ((await connection.collection('widgets').findOne({ _id: id as never })) as unknown as OutboxFields)._outbox;
  expect(outbox.at(-1)?.previousAttributes).toEqual({ name: 'cog', externalId: 'old part' });
});

test('takeRevision answers the document as stamped with the revision taken, with the changes that landed since an earlier read', async () => {
  const programId = newProgramId();
  const id = await insertWidget(programId, 'cog');
  const earlier = await widgets.byId(programId, id);
  await widgets.change(programId, id, () => ({ set: { name: 'sprocket' }, events: () => [] }));

  const stamped = await widgets.takeRevision(programId, id);
  expect(earlier).toMatchObject({ name: 'cog', revision: 0 });
  expect(stamped).toMatchObject({ _id: id, name: 'sprocket', revision: 2 });
  expect(await widgets.byId(programId, id)).toMatchObject({ name: 'sprocket', revision: 2 });
  expect(await widgets.takeRevision(newProgramId(), id)).toBeNull();
});
