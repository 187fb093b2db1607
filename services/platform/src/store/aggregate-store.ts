import { isDeepStrictEqual } from 'node:util';
import type { EventEnvelope } from '@affiliate/contracts';
import type { Connection, FilterQuery, Model, UpdateQuery } from 'mongoose';
import { conflict } from '../errors';
import { GroupCommit } from '../group-commit';
import type { OutboxFields, OutboxRelay } from '../events/outbox';
import { findPage, type PageRequest } from '../http/pagination';
import { RecentReads } from '../recent-reads';
import { utcDayWithin } from './daily-counts';
import { asUniqueKeyConflict, isKeyTaken, unlessKeyTaken, UniqueKeyConflict } from './unique-keys';

export { UniqueKeyConflict };

/** What every aggregate document has: its id, the program it belongs to, and when it was made. */
export type Aggregate = { _id: string; createdAt: Date };
export type Stored<Doc> = Doc & OutboxFields;

/** `<programId>:<value>`: a single-field unique key that embeds the program (see AggregateStore.byKey). */
export const programKey = (programId: string, value: string): string => `${programId}:${value}`;

/** The key a removed document leaves in its unique fields: its own, so the value is free at once and no two collide. */
export const releasedKey = (id: string): string => `deleted:${id}`;

export type Change<Doc> = {
  set?: Partial<Doc>;
  unset?: (keyof Doc & string)[];
  /** Built from the state after the change, so `*.updated` carries exactly what was stored. */
  events: (next: Stored<Doc>) => EventEnvelope[];
  /**
   * The same events as the state before the change had them, for `previousAttributes`: needed when
   * `events` also shows something read beside the document that the change altered too (an
   * affiliate's plan or links), which `events` given the old document would show as it is now.
   * Absent: `events` given the old document.
   */
  previous?: (current: Stored<Doc>) => EventEnvelope[];
};

/**
 * What a store is built on: the service's database connection and its outbox relay (a
 * ServiceContext has both). Without a relay (a command-line tool writing beside the running
 * service) the events wait for the service's relay, whose sweep publishes them.
 */
export type StoreContext = { connection: Connection; relay?: OutboxRelay };

export type Decide<Doc> = (current: Stored<Doc>) => Change<Doc> | null | Promise<Change<Doc> | null>;

export type StoreOptions<Doc> = {
  /** The field naming a document's program: `programId`, or `_id` for the programs themselves. */
  programField?: 'programId' | '_id';
  /** The single-field unique keys, released (replaced by releasedKey) when a document is removed. */
  uniqueKeys?: (keyof Doc & string)[];
  /**
   * Fields that must be null for a stored document to be visible to reads, beyond not being
   * removed (a reversed sale is kept, so its externalId stays taken, but no read sees it).
   */
  liveWhenNull?: (keyof Doc & string)[];
  /**
   * How long `byIdCached` and `byKeyCached` may serve a document read earlier (RecentReads): for
   * reads every request of a hot path repeats. This store's own writes forget a program's entries at
   * once; another process's writes are seen after this long at most. Absent: those reads go to the
   * database like the others.
   */
  cacheReadsForMs?: number;
};

/** Enough for every link and affiliate a busy process serves clicks for within a few seconds. */
const CACHED_READS = 50_000;

/**
 * A document of a program by its id: a point lookup on `_id` alone, with the program checked on the
 * document found (the repositories of collections without an outbox use it too).
 */
export async function byIdInProgram<Doc extends { programId: string }>(
  model: Model<Doc>,
  programId: string,
  id: string,
): Promise<Doc | null> {
  const found = (await model.collection.findOne({ _id: id as never })) as Doc | null;
  return found?.programId === programId ? found : null;
}

/**
 * Inserts a document whose id or unique key says it may exist already (a redelivery, a racing
 * claim): false when it did. A plain driver insert of a document the caller built whole and typed
 * (these run per event or per request, where mongoose's document building showed in the profile).
 */
export async function insertOnce<Doc>(model: Model<Doc>, document: Doc): Promise<boolean> {
  return !((await unlessKeyTaken(() => model.collection.insertOne(document as never))) instanceof UniqueKeyConflict);
}

/**
 * `insertOnce` for many documents in one command (group commit): each is inserted unless its id or
 * unique key is taken, independently of the others (unordered). Answers, in order, whether each
 * landed. Which ones did not is read from the per-document errors the server reports (index by
 * index; services/platform/test/database-guarantees.group-commit.test.ts), never from its counts.
 * Any other failure throws: the caller cannot know which landed, and answers none.
 */
export async function insertEach<Doc>(model: Model<Doc>, documents: Doc[]): Promise<boolean[]> {
  const landed = await insertEachApart(model, documents);
  const refused = landed.find((each) => each instanceof Error);
  if (refused) throw refused;
  return landed as boolean[];
}

/**
 * `insertOnce` and `insertEach` shared by concurrent callers (group commit): the documents that
 * callers insert while earlier ones are being written go together in the next unordered insert, one
 * command for many callers' documents (a driver splits a very large one), per key (a program, or a
 * consumer). Each caller is answered for its own documents, in order. Two callers inserting the same
 * id in one batch: one lands, the other is told its key is taken, as with separate writes. A document
 * the server refuses for another reason fails its own caller only, and so does one the driver refuses
 * before sending (too large, not encodable): the batch is then sent again one document at a time. A
 * command that fails as a whole (the database away) fails every caller of its batch, though some of
 * their documents may have landed: callers retry, and their writes are idempotent by their keys.
 */
export class SharedInserts<Doc> {
  private readonly batches: GroupCommit<Doc, boolean | Error>;

  constructor(model: Model<Doc>, options: { maxBatch: number; maxInFlight: number } = { maxBatch: 200, maxInFlight: 2 }) {
    this.batches = new GroupCommit((_key, documents) => insertEachApart(model, documents), options);
  }

  /** Whether the document landed (false: its id or unique key is taken). */
  async insertOnce(key: string, document: Doc): Promise<boolean> {
    const landed = await this.batches.submit(key, document);
    if (landed instanceof Error) throw landed;
    return landed;
  }

  /** Whether each document landed, in order; answered (or failed) once all of them are settled. */
  async insertEach(key: string, documents: Doc[]): Promise<boolean[]> {
    const settled = await Promise.allSettled(documents.map((document) => this.insertOnce(key, document)));
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<boolean>).value);
  }
}

/** `insertEach`, each document answered apart: false for a taken key, the server's refusal for any other. */
async function insertEachApart<Doc>(model: Model<Doc>, documents: Doc[]): Promise<(boolean | Error)[]> {
  const landed: (boolean | Error)[] = documents.map(() => true);
  if (documents.length === 0) return landed;
  try {
    await model.collection.insertMany(documents as never[], { ordered: false });
  } catch (error) {
    // Refused by the driver before anything was sent: each document goes alone, so only that one fails.
    if (refusedBeforeSending(error)) {
      if (documents.length === 1) return [error as Error];
      return (await Promise.all(documents.map((document) => insertEachApart(model, [document])))).flat();
    }
    for (const failed of writeErrorsOf(error)) {
      landed[failed.index] = isKeyTaken(failed)
        ? false
        : Object.assign(new Error(`the database refused the document (code ${failed.code}): ${failed.message}`), { code: failed.code });
    }
  }
  return landed;
}

/** A document the driver would not send (past the size limit, or not encodable as BSON): nothing of the command reached the server. */
function refusedBeforeSending(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'MongoInvalidArgumentError' || name === 'BSONError';
}

/**
 * The per-document failures of a multi-document write (MongoBulkWriteError); throws the error itself
 * when it is not one (a lost connection, a server error): nothing can then be said per document.
 */
export function writeErrorsOf(error: unknown): { index: number; code: number; message: string }[] {
  const errors = (error as { writeErrors?: unknown } | null)?.writeErrors;
  const list = Array.isArray(errors) ? errors : errors ? [errors] : [];
  if (list.length === 0) throw error;
  // The message too: the local server names some duplicates by it alone (isDuplicateKey).
  return list.map((failed: { index: number; code: number; errmsg?: string }) => ({
    index: failed.index,
    code: failed.code,
    message: failed.errmsg ?? '',
  }));
}

/**
 * A conditional upsert that may lose the race to create its document (a redelivered event, an
 * older one arriving late): the duplicate key means the document is there, which is all it wanted.
 */
export async function ignoringDuplicateKey(write: Promise<unknown>): Promise<void> {
  await unlessKeyTaken(() => write);
}

/**
 * Stamps the events about the document written (their data's id is its id) with its revision after
 * the write, and its `*.updated` with `previousAttributes`: the top-level fields of `data` that differ
 * from the same event built from the state before the change (`previous`), with their old values.
 * Computed here, the one place that holds both states, so that every producer's events carry them.
 * Events about another object (affiliate.updated carried by a link's write) get neither: this
 * revision is not theirs.
 */
function withRevision(events: EventEnvelope[], id: string, revision: number, previous: EventEnvelope[] = []): EventEnvelope[] {
  return events.map((event) => {
    if (event.data.id !== id) return event;
    const old = event.type.endsWith('.updated')
      ? previous.find((candidate) => candidate.type === event.type && candidate.data.id === id)
      : undefined;
    return old ? { ...event, revision, previousAttributes: changedFields(old.data, event.data) } : { ...event, revision };
  });
}

/** The top-level fields whose values differ, with their values in `before` (null where it had none). */
function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!isDeepStrictEqual(before[key], after[key])) changed[key] = before[key] ?? null;
  }
  return changed;
}

/** Fields of the outbox that no read needs. */
const HIDDEN = { projection: { _outbox: 0, _pendingSince: 0 } };
const CHANGE_ATTEMPTS = 20;
/** Documents a stream holds at once: small enough for any number of streams, large enough to keep round trips few. */
const STREAM_BATCH = 500;

/**
 * The one way the services read and write their aggregates. Every method takes the program; there
 * is no way to reach a document without it.
 *
 * Reads by id are point lookups on `_id` alone; the store checks the program and the tombstone on
 * the document it got back, so neither extra condition can turn the lookup into a scan on a server
 * whose only indexes are unique ones. Lookups by a secondary key go through one single-field unique
 * key whose value embeds the program (programKey), matched exactly, for the same reason.
 *
 * Repositories extend it with the reads and writes of their aggregate, in the domain's words; the
 * query-building methods are protected, so use cases never hold a database filter.
 *
 * Every write that changes what integrators see carries its events in the same single-document
 * write (the transactional outbox), and the store hands the document's id to the relay, which
 * publishes them at once. Building a store registers its model with the relay: no model can carry
 * an outbox that nobody relays.
 */
export class AggregateStore<Doc extends Aggregate> {
  protected readonly model: Model<Doc>;
  private readonly relay: OutboxRelay | undefined;
  private readonly recent: RecentReads<Stored<Doc>> | undefined;

  constructor(
    context: StoreContext,
    model: (connection: Connection) => Model<Doc>,
    private readonly options: StoreOptions<Doc> = {},
  ) {
    this.model = model(context.connection);
    this.relay = context.relay;
    this.relay?.watch(this.model);
    if (options.cacheReadsForMs) this.recent = new RecentReads({ ttlMs: options.cacheReadsForMs, maxEntries: CACHED_READS });
  }

  /** The document with this id in this program, or null (another program's, removed, or never there). */
  async byId(programId: string, id: string): Promise<Stored<Doc> | null> {
    return this.pointLookup(programId, { _id: id }, true);
  }

  /** `byId`, served from what this process read within `cacheReadsForMs` (StoreOptions) when it can. */
  async byIdCached(programId: string, id: string): Promise<Stored<Doc> | null> {
    return this.recent ? this.recent.get(programId, `_id\n${id}`, () => this.byId(programId, id)) : this.byId(programId, id);
  }

  /** Several documents by id, each a point lookup; the ones not in this program are left out. Order kept. */
  async byIds(programId: string, ids: readonly string[]): Promise<Stored<Doc>[]> {
    const found: (Stored<Doc> | null)[] = await Promise.all([...new Set(ids)].map((id) => this.byId(programId, id)));
    return found.filter((document) => document !== null) as Stored<Doc>[];
  }

  /**
   * The document whose single-field unique key `field` equals `key` (a programKey), or null. With
   * `evenIfNotLive`, also one that reads otherwise hide (a reversed sale still holds its externalId).
   */
  protected async byKey(
    programId: string,
    field: keyof Doc & string,
    key: string,
    options: { evenIfNotLive?: boolean } = {},
  ): Promise<Stored<Doc> | null> {
    return this.pointLookup(programId, { [field]: key }, !options.evenIfNotLive);
  }

  /** `byKey` for a live document, served from what this process read within `cacheReadsForMs` when it can. */
  protected async byKeyCached(programId: string, field: keyof Doc & string, key: string): Promise<Stored<Doc> | null> {
    const read = () => this.byKey(programId, field, key);
    return this.recent ? this.recent.get(programId, `${field}\n${key}`, read) : read();
  }

  /**
   * A page of a list, newest first. Lists may scan on the local server; hot paths use byId and byKey.
   * With `evenIfNotLive`, documents that reads otherwise hide are listed too (a reversed sale's commissions).
   */
  protected async page(
    programId: string,
    filter: FilterQuery<Doc>,
    page: PageRequest,
    options: { evenIfNotLive?: boolean } = {},
  ): Promise<{ items: Doc[]; nextCursor: string | null }> {
    const program = { [this.options.programField ?? 'programId']: programId } as FilterQuery<Doc>;
    return findPage(this.model, options.evenIfNotLive ? { ...filter, ...program } : this.scope(programId, filter), page, program);
  }

  /** Every live document of the program that matches, in the order asked (a list: it may scan). */
  protected async all(
    programId: string,
    filter: FilterQuery<Doc>,
    sort: Record<string, 1 | -1> = { createdAt: -1, _id: -1 },
  ): Promise<Doc[]> {
    return (await this.model.find(this.scope(programId, filter)).sort(sort).lean()) as Doc[];
  }

  /**
   * Every live document of the program that matches, one batch at a time through a cursor, with only
   * the fields asked for: what a read over a whole period uses (reports, payout runs), so that its
   * memory is one batch however many documents match.
   */
  protected async *stream(
    programId: string,
    filter: FilterQuery<Doc>,
    fields: (keyof Doc & string)[],
    options: { sort?: Record<string, 1 | -1>; evenIfNotLive?: boolean } = {},
  ): AsyncGenerator<Doc> {
    const projection = Object.fromEntries(fields.map((field) => [field, 1]));
    const query = options.evenIfNotLive
      ? { ...filter, [this.options.programField ?? 'programId']: programId }
      : this.scope(programId, filter);
    const cursor = this.model
      .find(query as FilterQuery<Doc>, projection)
      .sort(options.sort ?? {})
      .lean()
      .batchSize(STREAM_BATCH)
      .cursor();
    try {
      for await (const document of cursor) yield document as Doc;
    } finally {
      await cursor.close();
    }
  }

  protected async count(programId: string, filter: FilterQuery<Doc>): Promise<number> {
    return this.model.countDocuments(this.scope(programId, filter));
  }

  /**
   * The program's live documents counted by the database in one pass (never the rows themselves), per
   * value of `by` (or all together) and UTC day of `dateField` within [from, to) (day null: outside
   * it): a summary's totals, what the period holds, and its daily series at once.
   */
  protected countsByDay<Key>(
    programId: string,
    dateField: keyof Doc & string,
    period: { from: Date; to: Date },
    by?: keyof Doc & string,
  ): Promise<{ _id: { key: Key | null; day: string | null }; count: number }[]> {
    return this.model.aggregate([
      // An aggregation skips the outbox plugin's query hooks: tombstones are left out here.
      { $match: { ...this.scope(programId, {}), deletedAt: null } },
      {
        $group: {
          _id: { key: by === undefined ? null : `$${by}`, day: utcDayWithin(`$${dateField}`, period.from, period.to) },
          count: { $sum: 1 },
        },
      },
    ]);
  }

  /** Stores a new document with its events in one write. A taken unique key is a UniqueKeyConflict. */
  async insert(document: Doc, events: (stored: Doc) => EventEnvelope[]): Promise<Doc> {
    const outbox = withRevision(events(document), document._id, (document as { revision?: number }).revision ?? 0);
    try {
      await this.model.create({ ...document, _outbox: outbox, ...(outbox.length > 0 ? { _pendingSince: new Date() } : {}) });
    } catch (error) {
      throw this.asConflict(error);
    } finally {
      this.wrote(this.programOf(document as Stored<Doc>) as string);
    }
    if (outbox.length > 0) this.relay?.written(this.model, document._id, this.programOf(document as Stored<Doc>) as string);
    return document;
  }

  /**
   * `insert` of new documents in one write (a batch job's drafts): ids the caller has just made, so
   * none is taken; any failure throws, and the caller knows none of them landed for sure.
   */
  async insertAll(documents: Doc[], events: (stored: Doc) => EventEnvelope[]): Promise<void> {
    if (documents.length === 0) return;
    const outboxes = documents.map((document) =>
      withRevision(events(document), document._id, (document as { revision?: number }).revision ?? 0),
    );
    const programs = new Set(documents.map((document) => this.programOf(document as Stored<Doc>) as string));
    try {
      await this.model.insertMany(
        documents.map((document, index) => ({
          ...document,
          _outbox: outboxes[index],
          ...(outboxes[index]!.length > 0 ? { _pendingSince: new Date() } : {}),
        })),
      );
    } catch (error) {
      throw this.asConflict(error);
    } finally {
      for (const program of programs) this.wrote(program);
    }
    documents.forEach((document, index) => {
      if (outboxes[index]!.length > 0) this.relay?.written(this.model, document._id, this.programOf(document as Stored<Doc>) as string);
    });
  }

  /**
   * Read, decide, write-if-unchanged: the write lands only if no other write happened since the
   * read (revision check), and the events are built from exactly the state stored. `decide` may
   * throw to refuse, or answer null to leave the document as it is. Null when there is no such
   * document in the program, or when `decide` left it.
   */
  async change(programId: string, id: string, decide: Decide<Doc>): Promise<Stored<Doc> | null> {
    return this.changeGuarded(programId, id, {}, decide);
  }

  /**
   * `change` for a document that some fields of are also written without a revision (counters): the
   * write also requires `guard`, and `decide` checks the same on what it read. A write that misses
   * the guard reads again, so `decide` sees the value that raced past it.
   */
  protected async changeGuarded(
    programId: string,
    id: string,
    guard: FilterQuery<Doc>,
    decide: Decide<Doc>,
    options: { evenIfNotLive?: boolean } = {},
  ): Promise<Stored<Doc> | null> {
    for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt += 1) {
      const current = await this.pointLookup(programId, { _id: id }, !options.evenIfNotLive);
      if (!current) return null;
      const change = await decide(current);
      if (!change) return null;
      const write = this.revisionChecked(current, change, guard);
      const written = await this.model
        .updateOne(write.filter, write.update)
        .catch((error: unknown) => Promise.reject(this.asConflict(error)))
        .finally(() => this.wrote(programId));
      if (written.modifiedCount === 1) {
        if (write.outbox.length > 0) this.relay?.written(this.model, id, programId);
        return write.next;
      }
    }
    throw conflict('The object is being changed by other requests right now; retry', 'concurrent_modification');
  }

  /**
   * `change` of many documents of the program in one read and one write (a batch job: a payout run
   * claiming its commissions): the documents are read by `_id $in` (a point lookup per id), each is
   * decided as `change` decides, and the changes go in one unordered bulk write, each checked
   * against the revision read and carrying its own events, as `change`'s write does. Answers the ids
   * whose last answer of `decide` is what is stored: its change landed, or it answered null (left the
   * document as it is). An id not answered was never decided (no such document in the program, or
   * not visible), or its document went before its change could land: whatever `decide` recorded for
   * it did not happen.
   *
   * The bulk write's answer counts the writes that landed, not which: when not every one did (another
   * write came between the read and this one), every document written is decided again through
   * `change`, one at a time. So `decide` must answer null for a document that already has its change
   * (a claim already this payout's), as a retry of `change` after a lost answer needs anyway.
   */
  async changeEach(
    programId: string,
    ids: readonly string[],
    decide: Decide<Doc>,
    options: { evenIfNotLive?: boolean } = {},
  ): Promise<Set<string>> {
    const settled = new Set<string>();
    const unique = [...new Set(ids)];
    if (unique.length === 0) return settled;
    const found = (await this.model.collection.find({ _id: { $in: unique } } as never, HIDDEN).toArray()) as unknown as Stored<Doc>[];
    const writes: { id: string; write: ReturnType<AggregateStore<Doc>['revisionChecked']> }[] = [];
    for (const current of found) {
      if (!this.visible(current, programId, !options.evenIfNotLive)) continue;
      const change = await decide(current);
      if (change) writes.push({ id: current._id, write: this.revisionChecked(current, change, {}) });
      else settled.add(current._id);
    }
    if (writes.length === 0) return settled;
    const written = await this.model
      .bulkWrite(writes.map(({ write }) => ({ updateOne: { filter: write.filter, update: write.update } })) as never, { ordered: false })
      .catch((error: unknown) => Promise.reject(this.asConflict(error)))
      .finally(() => this.wrote(programId));
    for (const { id, write } of writes) {
      // A nudge for a write that did not land finds nothing to publish; the write that beat it nudged its own.
      if (write.outbox.length > 0) this.relay?.written(this.model, id, programId);
    }
    if (written.modifiedCount === writes.length) {
      for (const { id } of writes) settled.add(id);
      return settled;
    }
    for (const { id } of writes) {
      // `change` answers null both when `decide` left the document (settled) and when the document
      // went before a change could land (not settled): which one, `decide`'s last answer tells.
      let leftAsItIs = false;
      const stored = await this.changeGuarded(
        programId,
        id,
        {},
        async (current) => {
          const change = await decide(current);
          leftAsItIs = change === null;
          return change;
        },
        options,
      );
      if (stored !== null || leftAsItIs) settled.add(id);
    }
    return settled;
  }

  /**
   * The revision-checked write of a change decided on `current`: the state it leads to, its events
   * (stamped with the next revision), and the filter and update that land only on the revision read.
   */
  private revisionChecked(current: Stored<Doc>, change: Change<Doc>, guard: FilterQuery<Doc>) {
    const id = current._id;
    const revision = (current.revision ?? 0) + 1;
    const next = { ...current, ...change.set, revision } as Stored<Doc>;
    for (const key of change.unset ?? []) delete (next as Record<string, unknown>)[key];
    // The events as the state before would have had them, built first: a builder that keeps what it
    // built (the answer's representation) is then left with the state stored.
    const previous = (change.previous ?? change.events)(current);
    const outbox = withRevision(change.events(next), id, revision, previous);
    const update = {
      $set: { ...change.set, revision, ...(outbox.length > 0 ? { _pendingSince: new Date() } : {}) },
      $push: { _outbox: { $each: outbox } },
      ...(change.unset?.length ? { $unset: Object.fromEntries(change.unset.map((key) => [key, 1])) } : {}),
    } as UpdateQuery<Doc>;
    const filter = { ...guard, _id: id, revision: current.revision ?? 0, deletedAt: current.deletedAt ?? null } as FilterQuery<Doc>;
    return { next, outbox, update, filter };
  }

  /**
   * Takes the document's next revision without otherwise changing it, for an event about it that
   * another document's write carries (affiliate.updated in a link's write): that event is stamped
   * with it by its producer. Taken before that write, so a write that then fails leaves a gap in
   * the revisions, which subscribers are told to expect, never two events with one revision. Answers
   * the document as stamped, so the event shows the state its revision is about (one read before
   * may be older than a change that took a revision in between). Null when there is no such
   * document in the program.
   */
  async takeRevision(programId: string, id: string): Promise<Stored<Doc> | null> {
    for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt += 1) {
      const current = await this.pointLookup(programId, { _id: id }, false);
      if (!current) return null;
      const revision = (current.revision ?? 0) + 1;
      const written = await this.model
        .updateOne(
          { _id: id, revision: current.revision ?? 0, deletedAt: null } as FilterQuery<Doc>,
          { $set: { revision } } as UpdateQuery<Doc>,
        )
        .finally(() => this.wrote(programId));
      if (written.modifiedCount === 1) return { ...current, revision };
    }
    throw conflict('The object is being changed by other requests right now; retry');
  }

  /**
   * The one deletion rule: the document becomes a tombstone carrying its `*.deleted` event, its
   * unique keys are released at once (the same code, email or externalId can be used again), and
   * the relay removes it for good once the event is out. `decide` may throw to refuse.
   */
  async remove(programId: string, id: string, events: (current: Stored<Doc>) => EventEnvelope[]): Promise<Stored<Doc> | null> {
    return this.change(programId, id, (current) => ({
      set: {
        ...this.releasedKeys(id),
        deletedAt: new Date(),
      } as unknown as Partial<Doc>,
      events: () => events(current),
    }));
  }

  /**
   * Removal guarded by a rule over the other documents (an affiliate keeps at least one link):
   * without multi-document transactions the rule is made safe by order. The document is hidden
   * first, then `mustStay` looks at what remains; if it says so (two removals raced), the document
   * comes back. Otherwise the removal completes as `remove` does. 'kept' or 'removed'; null when
   * there is no such document in the program.
   */
  async removeUnless(
    programId: string,
    id: string,
    mustStay: () => Promise<boolean>,
    events: (current: Stored<Doc>) => EventEnvelope[],
  ): Promise<'kept' | 'removed' | null> {
    const current = await this.byId(programId, id);
    if (!current) return null;
    const deletedAt = new Date();
    try {
      const hidden = await this.model.updateOne(
        { _id: id, deletedAt: null } as FilterQuery<Doc>,
        { $set: { deletedAt } } as UpdateQuery<Doc>,
      );
      if (hidden.modifiedCount !== 1) return null;
      if (await mustStay()) {
        await this.model.updateOne({ _id: id, deletedAt } as FilterQuery<Doc>, { $set: { deletedAt: null } } as UpdateQuery<Doc>);
        return 'kept';
      }
      const released = this.releasedKeys(id);
      const revision = (current.revision ?? 0) + 1;
      await this.model.updateOne(
        { _id: id, deletedAt } as FilterQuery<Doc>,
        {
          $set: { ...released, revision, _pendingSince: new Date() },
          $push: { _outbox: { $each: withRevision(events(current), id, revision) } },
        } as UpdateQuery<Doc>,
      );
      this.relay?.written(this.model, id, programId);
      return 'removed';
    } finally {
      this.wrote(programId);
    }
  }

  /**
   * Drops documents without events of their own: ones no event ever announced (a link claimed for an
   * affiliate whose own write then failed), or parts whose going another event announces (the links
   * of a removed affiliate, with affiliate.deleted).
   */
  protected async discard(programId: string, filter: FilterQuery<Doc>): Promise<void> {
    try {
      await this.model.deleteMany(this.scope(programId, filter));
    } finally {
      this.wrote(programId);
    }
  }

  /**
   * An atomic conditional write on one document (counters, limits): it lands only where `condition`
   * holds on the live document, with the events it carries. True when it landed.
   */
  protected async applyIf(
    programId: string,
    id: string,
    condition: FilterQuery<Doc>,
    update: UpdateQuery<Doc>,
    events: EventEnvelope[] = [],
  ): Promise<boolean> {
    const withEvents = (
      events.length > 0
        ? {
            ...update,
            $set: { ...(update.$set as object), _pendingSince: new Date() },
            $push: { ...(update.$push as object), _outbox: { $each: events } },
          }
        : update
    ) as UpdateQuery<Doc>;
    const written = await this.model
      .updateOne({ ...this.scope(programId, condition), _id: id }, withEvents)
      .catch((error: unknown) => Promise.reject(this.asConflict(error)))
      .finally(() => this.wrote(programId));
    if (written.modifiedCount === 1 && events.length > 0) this.relay?.written(this.model, id, programId);
    return written.modifiedCount === 1;
  }

  /** True when the live document with this id matches `condition` (a point lookup plus conditions). */
  protected async has(programId: string, id: string, condition: FilterQuery<Doc>): Promise<boolean> {
    return (await this.model.exists({ ...this.scope(programId, condition), _id: id })) !== null;
  }

  /** After each write of this store (landed or not): what this process read of the program before it is not served again. */
  private wrote(programId: string): void {
    this.recent?.forget(programId);
  }

  /** One document through an exact match on `_id` or a unique key; program and tombstone checked here. */
  private async pointLookup(programId: string, match: Record<string, string>, liveOnly: boolean): Promise<Stored<Doc> | null> {
    const found = (await this.model.collection.findOne(match as never, HIDDEN)) as Stored<Doc> | null;
    return found && this.visible(found, programId, liveOnly) ? found : null;
  }

  /** A document read by a point lookup is the program's, not removed, and (`liveOnly`) not hidden from reads. */
  private visible(found: Stored<Doc>, programId: string, liveOnly: boolean): boolean {
    if (this.programOf(found) !== programId || (found.deletedAt ?? null) !== null) return false;
    return !liveOnly || (this.options.liveWhenNull ?? []).every((field) => (found[field] ?? null) === null);
  }

  /** The program and the live conditions added to a filter (tombstones are left out by the outbox plugin). */
  private scope(programId: string, filter: FilterQuery<Doc>): FilterQuery<Doc> {
    const live = Object.fromEntries((this.options.liveWhenNull ?? []).map((field) => [field, null]));
    return { ...filter, ...live, [this.options.programField ?? 'programId']: programId } as FilterQuery<Doc>;
  }

  private programOf(document: Stored<Doc>): unknown {
    return (document as Record<string, unknown>)[this.options.programField ?? 'programId'];
  }

  /** The unique keys of a removed document, each replaced by its own placeholder. */
  private releasedKeys(id: string): Record<string, string> {
    return Object.fromEntries((this.options.uniqueKeys ?? []).map((key) => [key, releasedKey(id)]));
  }

  /** A duplicate-key error of the driver as the store's typed conflict, naming the key. */
  private asConflict(error: unknown): unknown {
    return asUniqueKeyConflict(error, this.options.uniqueKeys ?? []);
  }
}
