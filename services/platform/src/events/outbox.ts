import { randomUUID } from 'node:crypto';
import type { EventData, EventEnvelope, EventType } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';
import type { Logger } from '../logger';
import type { OutboxBacklog, OutboxMetrics } from '../metrics';
import { currentTraceCarrier, outsideAnyTrace } from '../tracing';
import { TickAndNudge, Turns, type Turn } from '../turns';
import type { EventBus } from './bus';

/**
 * Transactional outbox without multi-document transactions: an aggregate's pending events live in
 * the aggregate's own document (`_outbox`), so the state change and its events are one atomic
 * document write. The relay publishes them with confirms and then pulls them; a crash in between
 * publishes again, which consumers absorb because they are idempotent by event id.
 *
 * The same write sets `_pendingSince`, a marker that only documents with unpublished events carry
 * (a sparse index serves it on MongoDB), and the writer (the platform's AggregateStore, the only
 * one) hands the written document's id to the relay, which publishes it at once. A timed sweep over
 * the marker catches what a crash left.
 *
 * Deletes are tombstones (`deletedAt`) until their `*.deleted` event is out; the relay then removes
 * the document for good. Every query through mongoose skips tombstones unless it names `deletedAt`.
 */
export type OutboxFields = { _outbox: EventEnvelope[]; deletedAt: Date | null; revision: number; _pendingSince?: Date };

const QUERY_HOOKS = [
  'find',
  'findOne',
  'countDocuments',
  'updateOne',
  'updateMany',
  'findOneAndUpdate',
  'findOneAndDelete',
  'deleteOne',
  'deleteMany',
] as const;

export function outboxPlugin(schema: Schema): void {
  // Events must be stored exactly as built: without this mongoose drops empty objects (metadata: {}).
  schema.set('minimize', false);
  schema.add({
    _outbox: { type: [Schema.Types.Mixed], default: [], select: false },
    deletedAt: { type: Date, default: null },
    revision: { type: Number, default: 0 },
    // No default: absent unless events wait, which keeps the sparse index small.
    _pendingSince: { type: Date, select: false },
  });
  // Sparse: only documents with events still to publish carry the marker, so the sweep reads few.
  schema.index({ _pendingSince: 1 }, { sparse: true });
  for (const hook of QUERY_HOOKS) {
    schema.pre(hook, function skipTombstones() {
      if (!('deletedAt' in this.getFilter())) this.where({ deletedAt: null });
    });
  }
}

/** An event whose data the type system holds to its type's schema in the catalogue (contracts). */
export function createEvent<Type extends EventType>(type: Type, programId: string, data: EventData<Type>): EventEnvelope<EventData<Type>> {
  // The trace of the request (or message) that caused the event travels in the outbox with it, so
  // the relay's publish continues that trace however much later it happens, after a restart too.
  const headers = currentTraceCarrier();
  return { id: randomUUID(), type, programId, occurredAt: new Date().toISOString(), data, ...(headers ? { headers } : {}) };
}

/** The models of a connection whose documents carry an outbox (the plugin's `_outbox` path). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function outboxModelsOf(connection: Connection): Model<any>[] {
  return Object.values(connection.models).filter((model) => model.schema.path('_outbox') !== undefined);
}

export type OutboxRelayOptions = {
  bus: EventBus;
  logger: Logger;
  /**
   * How often the sweep looks for events that a crash left behind (another replica's, or a CLI's
   * write). It reads the marker: a small read on MongoDB (sparse index), the whole collection on the
   * local server, so it runs rarely; a restart sweeps at once anyway.
   */
  sweepIntervalMs?: number;
  /** How often documents this relay could not publish (broker or database away) are tried again. */
  retryIntervalMs?: number;
  /** Documents relayed at the same time (in up to two batches); their publishes share the channel's pipelined confirms. */
  concurrency?: number;
  metrics?: OutboxMetrics;
};

type PendingDocument = { _id: unknown; _outbox: EventEnvelope[]; deletedAt: Date | null };
type Watched = Model<PendingDocument>;
/** A document to relay, and the program it belongs to (programs take turns; the sweep's finds share one turn). */
type Target = { model: Watched; id: unknown; program: string };
/** When a document's events began to wait, as the relay learned it (epoch ms). */
type Since = number;

/** Events older than this are the sweep's to find; younger ones are on their way through written(). */
const SWEEP_GRACE_MS = 1000;
const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
const DEFAULT_RETRY_INTERVAL_MS = 5_000;
const SWEEP_BATCH = 500;
/** Documents relayed at once, and the most one batch takes (one find, one wait for confirms, one bulkWrite). */
const DEFAULT_CONCURRENCY = 64;
const BATCH = 32;
const BATCHES_IN_FLIGHT = 2;
/**
 * Documents whose events have waited since `cutoff` or longer, tombstones included; `unmarked` adds
 * those written before the marker existed (a scan, so only at start and when draining).
 */
function findPending(
  model: Watched,
  cutoff: Date,
  options: { unmarked?: boolean; limit?: number },
): Promise<{ _id: unknown; _pendingSince?: Date }[]> {
  const marked = { _pendingSince: { $lte: cutoff } };
  const due = options.unmarked ? { $or: [marked, { '_outbox.0': { $exists: true }, _pendingSince: { $exists: false } }] } : marked;
  // The marker comes along (same document, no extra read) so the oldest pending age is the write's, not the sweep's.
  const query = model.find({ ...due, deletedAt: { $exists: true } }).select('_id _pendingSince');
  return (options.limit ? query.limit(options.limit) : query).lean();
}

/**
 * Publishes what the outbox holds. A write hands the relay its document's id (the plugin's hooks),
 * and that document's events go out at once. Documents waiting together go as a batch, programs
 * taking turns within it: read in one find by _id, published together with the broker's confirms
 * awaited once, and cleared in one bulkWrite. No query runs per write beyond that. A sweep every
 * few seconds reads the marker of documents whose events are still waiting (broker away, process
 * crashed between write and publish).
 */
export class OutboxRelay {
  private failing = false;
  private readonly models: Watched[] = [];
  /**
   * Documents waiting to be relayed and being relayed, per program in write order (the platform's
   * turn-taking worker), so one program's burst of writes does not hold back another's events.
   */
  private readonly turns: Turns<Target>;
  private readonly loop: TickAndNudge;
  /** Documents whose relaying failed (broker or database away): tried again every retryIntervalMs. */
  private readonly failed = new Map<string, Target>();
  private lastSweep = 0;
  /** Written again while being relayed: relayed once more afterwards, so nothing is skipped. */
  private readonly again = new Map<string, Target>();
  /**
   * Every document this relay knows has events waiting (written here, or found by a sweep), from
   * the moment they began to wait until they are published and cleared (backlog()).
   */
  private readonly pendingSince = new Map<string, Since>();
  /** When the write that made a document be relayed again (`again`) happened. */
  private readonly againSince = new Map<string, Since>();

  constructor(private readonly options: OutboxRelayOptions) {
    options.metrics?.watch(() => this.sharedBacklog());
    this.turns = new Turns<Target>({
      // Two batches in flight (one waits for its confirms while the next is read and published);
      // what is written meanwhile gathers into the batch after, up to BATCH documents.
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      batch: Math.min(BATCH, options.concurrency ?? DEFAULT_CONCURRENCY),
      maxBatches: BATCHES_IN_FLIGHT,
      onTurn: (turns) => this.relayTurns(turns),
    });
    const sweepEvery = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    this.loop = new TickAndNudge({
      everyMs: Math.min(sweepEvery, options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS),
      look: () => this.sweep({ graceMs: SWEEP_GRACE_MS }),
      tick: () => {
        this.retryFailed();
        if (Date.now() - this.lastSweep >= sweepEvery) this.nudge();
      },
    });
  }

  /**
   * What waits in the database, the same from every replica of the service (the marker that every
   * write with events sets and the relay's clear removes): the outbox gauges, so that two replicas
   * export the service's backlog once each instead of each its own part, and max() over them is the
   * service's. One count and one indexed read per watched collection, once per scrape (the sparse
   * marker index on MongoDB; a scan on the local server). Before it starts, a relay reports what it
   * knows (nothing yet); when the database does not answer, what it knows in memory.
   */
  async sharedBacklog(): Promise<OutboxBacklog> {
    if (this.loop.isStopped) return this.backlog();
    try {
      let pending = 0;
      let oldestSince: Since | undefined;
      for (const model of this.models) {
        // Naming deletedAt counts tombstones too: their *.deleted event waits like any other.
        const marked = { _pendingSince: { $exists: true }, deletedAt: { $exists: true } };
        pending += await model.countDocuments(marked);
        const oldest = (await model.findOne(marked).sort({ _pendingSince: 1 }).select('_pendingSince').lean()) as {
          _pendingSince?: Date;
        } | null;
        const since = oldest?._pendingSince?.getTime();
        if (since !== undefined && (oldestSince === undefined || since < oldestSince)) oldestSince = since;
      }
      return { pending, oldestSince };
    } catch {
      return this.backlog();
    }
  }

  /** What waits, as this relay knows it; documents a crash left are known from the next sweep on. */
  backlog(): { pending: number; oldestSince: number | undefined } {
    let oldestSince: number | undefined;
    for (const since of this.pendingSince.values()) if (oldestSince === undefined || since < oldestSince) oldestSince = since;
    return { pending: this.pendingSince.size, oldestSince };
  }

  /** The collections whose documents carry an outbox: the sweep looks at each of them. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  watch(...models: Model<any>[]): void {
    for (const model of models as Watched[]) {
      if (!this.models.includes(model)) this.models.push(model);
    }
  }

  start(): void {
    this.lastSweep = Date.now();
    // A restart sweeps at once, the documents written before the marker existed included.
    this.loop.start(this.loop.nudge(() => this.sweep({ unmarked: true })));
  }

  /** What failed to go out is queued again, by id: no read of the collection. */
  private retryFailed(): void {
    for (const [key, target] of this.failed) {
      this.failed.delete(key);
      if (!this.turns.isRunning(key)) this.turns.add(target.program, target, { key });
    }
  }

  /** A document of a watched model was written with events: publish them now, in its program's turn. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  written(model: Model<any>, id: unknown, program = '', since: Since = Date.now()): void {
    const target = { model: model as Watched, id, program };
    const key = keyOf(target);
    if (!this.pendingSince.has(key)) this.pendingSince.set(key, since);
    if (this.turns.isRunning(key)) {
      this.again.set(key, target);
      if (!this.againSince.has(key)) this.againSince.set(key, since);
    } else this.turns.add(program, target, { key });
  }

  /** Sweep now; sweeps never overlap. */
  nudge(): void {
    this.lastSweep = Date.now();
    this.loop.nudge();
  }

  /**
   * Publishes everything pending right now; resolves true when all of it went out. It tries each
   * document once rather than waiting for the queue to empty, which with the broker away (and the
   * sweep re-queueing) it never would.
   */
  async drain(): Promise<boolean> {
    this.failing = false;
    try {
      for (const model of this.models) {
        const pending = await findPending(model, new Date(), { unmarked: true });
        for (let start = 0; start < pending.length; start += BATCH)
          await this.relayDocuments(pending.slice(start, start + BATCH).map((document) => ({ model, id: document._id, program: '' })));
      }
    } catch (error) {
      this.fail(error);
    }
    return !this.failing;
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.turns.whenIdle();
  }

  private async sweep(options: { graceMs?: number; unmarked?: boolean }): Promise<void> {
    try {
      const cutoff = new Date(Date.now() - (options.graceMs ?? 0));
      for (const model of this.models) {
        for (const document of await findPending(model, cutoff, { unmarked: options.unmarked, limit: SWEEP_BATCH })) {
          this.written(model, document._id, '', document._pendingSince?.getTime() ?? Date.now());
        }
      }
    } catch (error) {
      this.fail(error);
    }
  }

  /** A batch whose turn came; once it is through, what was written meanwhile goes in line again. */
  private relayTurns(turns: Turn<Target>[]): void {
    // Outside any trace: the batch starts in the context of whichever write or batch finished last,
    // and its reads and writes belong to none of those (its events carry their own).
    void outsideAnyTrace(() => this.relayDocuments(turns.map((turn) => turn.item))).finally(() => {
      for (const turn of turns) {
        const key = turn.key as string;
        this.turns.done(turn);
        const repeat = this.again.get(key);
        if (repeat) {
          this.again.delete(key);
          this.turns.add(repeat.program, repeat, { key });
        }
      }
    });
  }

  /** Relays the documents of a batch, each collection's together; a collection that fails leaves the others' done. */
  private async relayDocuments(targets: Target[]): Promise<void> {
    const byModel = new Map<Watched, Target[]>();
    for (const target of targets) byModel.set(target.model, [...(byModel.get(target.model) ?? []), target]);
    await Promise.all([...byModel].map(([model, ofModel]) => this.relayCollection(model, ofModel)));
  }

  /**
   * A batch's documents of one collection, published and cleared together (publishAndClear). When
   * that fails with the broker there, each is tried again alone (below).
   */
  private async relayCollection(model: Watched, targets: Target[]): Promise<void> {
    try {
      await this.publishAndClear(model, targets);
      this.relayed(targets);
    } catch (error) {
      // With the broker there, the failure may be one document's (an event it refuses, a write that
      // fails): each is tried again alone, so that one program's problem never fails the others of
      // its batch at every retry. With the broker away all fail alike, and are left to the retry.
      if (targets.length === 1 || !this.options.bus.isConnected()) return this.markFailed(targets, error);
      const outcomes = await Promise.allSettled(targets.map((target) => this.publishAndClear(model, [target])));
      const failed = targets.filter((_target, index) => outcomes[index]?.status === 'rejected');
      if (failed.length === 0) return this.relayed(targets);
      // The others are out; `failing` stays set, so a drain still says that not everything went.
      for (const target of targets) if (!failed.includes(target)) this.settled(keyOf(target));
      const first = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
      this.markFailed(failed, first.reason);
    }
  }

  /**
   * One find by _id, the events of every document published together with one wait for their
   * confirms, then one bulkWrite that clears them. Each clear keeps the one-document semantics: the
   * outbox is emptied and the marker goes only if it still holds exactly what went out; events queued
   * meanwhile keep both, and only what went out is pulled (a second bulkWrite, only then); a tombstone
   * is removed once its outbox is empty. A crash between publish and clear publishes them again,
   * which consumers absorb because they are idempotent by event id.
   */
  private async publishAndClear(model: Watched, targets: Target[]): Promise<void> {
    // `deletedAt: {$exists: true}` names the field, so tombstones are found too.
    const present = { deletedAt: { $exists: true } };
    const documents = (await model
      .find({ _id: { $in: targets.map((target) => target.id) }, ...present })
      .select('+_outbox deletedAt')
      .lean()) as PendingDocument[];
    const events = documents.flatMap((document) => document._outbox);
    await this.options.bus.publishAll(events);
    this.options.metrics?.published(events.length);
    if (documents.length > 0) {
      const clears = documents.map((document) => {
        const ids = document._outbox.map((event) => event.id);
        return {
          updateOne: {
            // ($all of nothing matches nothing, so an empty outbox is matched by its size alone.)
            filter: {
              _id: document._id,
              ...present,
              _outbox: { $size: ids.length },
              ...(ids.length > 0 ? { '_outbox.id': { $all: ids } } : {}),
            },
            update: { $set: { _outbox: [] }, $unset: { _pendingSince: 1 as const } },
          },
        };
      });
      // Only once nothing else is queued on it: a tombstone's last event is out, so it can go.
      const removals = documents
        .filter((document) => document.deletedAt)
        .map((document) => ({ deleteOne: { filter: { _id: document._id, deletedAt: { $ne: null }, _outbox: { $size: 0 } } } }));
      const cleared = await model.bulkWrite([...clears, ...removals], { ordered: true });
      if (cleared.matchedCount < clears.length) {
        // Some outbox gained events meanwhile: pull only what went out (a no-op on those already cleared).
        const pulls = documents
          .filter((document) => document._outbox.length > 0)
          .map((document) => ({
            updateOne: {
              filter: { _id: document._id, ...present, '_outbox.id': { $in: document._outbox.map((event) => event.id) } },
              update: { $pull: { _outbox: { id: { $in: document._outbox.map((event) => event.id) } } } },
            },
          }));
        if (pulls.length > 0) await model.bulkWrite(pulls, { ordered: false });
      }
    }
  }

  private relayed(targets: Target[]): void {
    for (const target of targets) this.settled(keyOf(target));
    if (this.failing) this.options.logger.info('outbox relay publishing again');
    this.failing = false;
  }

  /** Tried again every retryIntervalMs. */
  private markFailed(targets: Target[], error: unknown): void {
    for (const target of targets) {
      this.failed.set(keyOf(target), target);
      this.options.metrics?.failed();
    }
    this.fail(error);
  }

  /** The document's events are out; those of a write made meanwhile wait from that write on. */
  private settled(key: string): void {
    const since = this.againSince.get(key);
    this.againSince.delete(key);
    if (since !== undefined && this.again.has(key)) this.pendingSince.set(key, since);
    else this.pendingSince.delete(key);
  }

  private fail(error: unknown): void {
    if (!this.failing) this.options.logger.warn({ err: error }, 'outbox relay cannot publish yet; events stay queued');
    this.failing = true;
  }
}

function keyOf(target: Target): string {
  return `${target.model.collection.collectionName}:${String(target.id)}`;
}
