import { randomUUID } from 'node:crypto';
import { context } from '@opentelemetry/api';
import type { EventData, EventEnvelope, EventType } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';
import type { Logger } from '../logger';
import type { OutboxBacklog, OutboxMetrics } from '../metrics';
import { contextOf, currentTraceCarrier, outsideAnyTrace } from '../tracing';
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
  /** Documents relayed at the same time; their publishes share the channel's pipelined confirms. */
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
 * and that document's events go out at once: read by _id, published together, pulled by id. No
 * query runs per write beyond that. A sweep every few seconds reads the marker of documents whose
 * events are still waiting (broker away, process crashed between write and publish).
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private stopped = true;
  private failing = false;
  private readonly models: Watched[] = [];
  /**
   * Documents waiting to be relayed, per program and in write order; programs in the Map's
   * (round-robin) order, so one program's burst of writes does not hold back another's events.
   */
  private readonly queued = new Map<string, Map<string, Target>>();
  private queuedCount = 0;
  private readonly active = new Set<string>();
  /** Documents whose relaying failed (broker or database away): tried again every retryIntervalMs. */
  private readonly failed = new Map<string, Target>();
  private lastSweep = 0;
  /** Written again while being relayed: relayed once more afterwards, so nothing is skipped. */
  private readonly again = new Map<string, Target>();
  private idle: (() => void)[] = [];
  /**
   * Every document this relay knows has events waiting (written here, or found by a sweep), from
   * the moment they began to wait until they are published and cleared (backlog()).
   */
  private readonly pendingSince = new Map<string, Since>();
  /** When the write that made a document be relayed again (`again`) happened. */
  private readonly againSince = new Map<string, Since>();

  constructor(private readonly options: OutboxRelayOptions) {
    options.metrics?.watch(() => this.sharedBacklog());
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
    if (this.stopped) return this.backlog();
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
    this.stopped = false;
    const sweepEvery = this.options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    const tickEvery = Math.min(sweepEvery, this.options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS);
    const tick = () => {
      if (this.stopped) return;
      this.retryFailed();
      if (Date.now() - this.lastSweep >= sweepEvery) this.nudge();
      this.timer = setTimeout(tick, tickEvery);
      this.timer.unref();
    };
    this.lastSweep = Date.now();
    void this.sweep({ unmarked: true }).finally(() => {
      this.timer = setTimeout(tick, tickEvery);
      this.timer.unref();
    });
  }

  /** What failed to go out is queued again, by id: no read of the collection. */
  private retryFailed(): void {
    for (const [key, target] of this.failed) {
      this.failed.delete(key);
      if (!this.active.has(key)) this.enqueue(key, target);
    }
    this.pump();
  }

  /** A document of a watched model was written with events: publish them now, in its program's turn. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  written(model: Model<any>, id: unknown, program = '', since: Since = Date.now()): void {
    const target = { model: model as Watched, id, program };
    const key = `${model.collection.collectionName}:${String(id)}`;
    if (!this.pendingSince.has(key)) this.pendingSince.set(key, since);
    if (this.active.has(key)) {
      this.again.set(key, target);
      if (!this.againSince.has(key)) this.againSince.set(key, since);
    } else this.enqueue(key, target);
    this.pump();
  }

  private enqueue(key: string, target: Target): void {
    const waiting = this.queued.get(target.program) ?? new Map<string, Target>();
    if (!waiting.has(key)) this.queuedCount += 1;
    waiting.set(key, target);
    this.queued.set(target.program, waiting);
  }

  /** The oldest waiting document of the program whose turn it is; that program goes to the back of the line. */
  private takeNext(): [string, Target] | undefined {
    for (const [program, waiting] of this.queued) {
      const next = waiting.entries().next().value as [string, Target] | undefined;
      this.queued.delete(program);
      if (!next) continue;
      waiting.delete(next[0]);
      this.queuedCount -= 1;
      if (waiting.size > 0) this.queued.set(program, waiting);
      return next;
    }
    return undefined;
  }

  /** Sweep now; sweeps never overlap. */
  nudge(): void {
    if (this.sweeping) return;
    this.lastSweep = Date.now();
    void this.sweep({ graceMs: SWEEP_GRACE_MS });
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
        for (const document of await findPending(model, new Date(), { unmarked: true }))
          await this.relayDocument({ model, id: document._id, program: '' });
      }
    } catch (error) {
      this.fail(error);
    }
    return !this.failing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.sweeping) await this.sweeping;
    await this.whenIdle();
  }

  private sweep(options: { graceMs?: number; unmarked?: boolean }): Promise<void> {
    const run = async () => {
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
    };
    this.sweeping = run().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private pump(): void {
    const limit = this.options.concurrency ?? 16;
    while (this.active.size < limit) {
      const next = this.takeNext();
      if (!next) return;
      const [key, target] = next;
      this.active.add(key);
      // Outside any trace: pump runs in the context of whichever write or relay finished last, and
      // this document's reads and writes belong to none of those (its events carry their own).
      void outsideAnyTrace(() => this.relayDocument(target)).finally(() => {
        this.active.delete(key);
        const repeat = this.again.get(key);
        if (repeat) {
          this.again.delete(key);
          this.enqueue(key, repeat);
        }
        this.pump();
        if (this.active.size === 0 && this.queuedCount === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private whenIdle(): Promise<void> {
    if (this.active.size === 0 && this.queuedCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private async relayDocument(target: Target): Promise<void> {
    const { model, id } = target;
    const key = `${model.collection.collectionName}:${String(id)}`;
    // `deletedAt: {$exists: true}` names the field, so tombstones are found too.
    const self = { _id: id, deletedAt: { $exists: true } };
    try {
      const document = (await model.findOne(self).select('+_outbox deletedAt').lean()) as PendingDocument | null;
      if (!document) return this.settled(key);
      const ids = document._outbox.map((event) => event.id);
      // Published together: the channel keeps their order and the broker confirms them as a batch.
      // Each publish runs in the trace its event was caused in (the traceparent stored in the
      // envelope's headers), not in whatever this relay is doing now, so the amqplib
      // instrumentation's producer span is that request's child; a sweep after a restart continues
      // the request's trace too. Hand-made because no instrumentation can know it: the hop from the
      // request to the publish goes through a document in MongoDB, possibly another process's.
      await Promise.all(document._outbox.map((event) => context.with(contextOf(event.headers), () => this.options.bus.publish(event))));
      this.options.metrics?.published(ids.length);
      // One write in the usual case: the outbox still holds exactly what went out, so it is emptied and
      // the marker goes. Events queued meanwhile keep both, and only what went out is pulled.
      const cleared = await model.updateOne(
        // ($all of nothing matches nothing, so an empty outbox is matched by its size alone.)
        { ...self, _outbox: { $size: ids.length }, ...(ids.length > 0 ? { '_outbox.id': { $all: ids } } : {}) },
        { $set: { _outbox: [] }, $unset: { _pendingSince: 1 } },
      );
      if (cleared.matchedCount === 0 && ids.length > 0) await model.updateOne(self, { $pull: { _outbox: { id: { $in: ids } } } });
      if (document.deletedAt) {
        // Only once nothing else is queued on it: a tombstone's last event is out, so it can go.
        await model.deleteOne({ _id: id, deletedAt: { $ne: null }, _outbox: { $size: 0 } });
      }
      this.settled(key);
      if (this.failing) this.options.logger.info('outbox relay publishing again');
      this.failing = false;
    } catch (error) {
      this.failed.set(key, target);
      this.options.metrics?.failed();
      this.fail(error);
    }
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
