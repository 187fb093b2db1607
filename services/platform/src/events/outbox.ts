import { randomUUID } from 'node:crypto';
import type { EventEnvelope, EventType } from '@affiliate/contracts';
import { Schema, type FilterQuery, type Model, type UpdateQuery } from 'mongoose';
import { conflict } from '../errors';
import type { Logger } from '../logger';
import type { EventBus } from './bus';

/**
 * Transactional outbox without multi-document transactions: an aggregate's pending events live in
 * the aggregate's own document (`_outbox`), so the state change and its events are one atomic
 * document write. The relay publishes them with confirms and then pulls them; a crash in between
 * publishes again, which consumers absorb because they are idempotent by event id.
 *
 * Deletes are tombstones (`deletedAt`) until their `*.deleted` event is out; the relay then removes
 * the document for good. Every query through mongoose skips tombstones unless it names `deletedAt`.
 */
export type OutboxFields = { _outbox: EventEnvelope[]; deletedAt: Date | null; revision: number };

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
  });
  for (const hook of QUERY_HOOKS) {
    schema.pre(hook, function skipTombstones() {
      if (!('deletedAt' in this.getFilter())) this.where({ deletedAt: null });
    });
  }
}

export function createEvent<Data extends Record<string, unknown>>(type: EventType, programId: string, data: Data): EventEnvelope<Data> {
  return { id: randomUUID(), type, programId, occurredAt: new Date().toISOString(), data };
}

export type Change<Doc> = {
  set?: Partial<Doc>;
  unset?: (keyof Doc & string)[];
  /** Built from the state after the change, so `*.updated` carries exactly what was stored. */
  events: (next: Doc & OutboxFields) => EventEnvelope[];
};

/**
 * Read, compute, write-if-unchanged: the write only lands if no other write happened since the
 * read (revision check), and the events are computed from exactly the state that is stored.
 * Returns the stored state, or null when nothing matches the filter.
 */
export async function updateWithEvents<Doc extends object>(
  model: Model<Doc>,
  filter: FilterQuery<Doc>,
  decide: (current: Doc & OutboxFields) => Change<Doc> | Promise<Change<Doc>>,
  attempts = 20,
): Promise<(Doc & OutboxFields) | null> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const current = (await model.findOne(filter).lean()) as (Doc & OutboxFields) | null;
    if (!current) return null;
    const change = await decide(current);
    const next = { ...current, ...change.set, revision: current.revision + 1 } as Doc & OutboxFields;
    for (const key of change.unset ?? []) delete (next as Record<string, unknown>)[key];
    const update: UpdateQuery<Doc> = {
      $set: { ...change.set, revision: current.revision + 1 },
      $push: { _outbox: { $each: change.events(next) } },
    } as UpdateQuery<Doc>;
    if (change.unset?.length) update.$unset = Object.fromEntries(change.unset.map((key) => [key, 1])) as UpdateQuery<Doc>['$unset'];
    const result = await model.updateOne({ ...filter, revision: current.revision } as FilterQuery<Doc>, update);
    if (result.modifiedCount === 1) return next;
  }
  throw conflict('The object is being changed by other requests right now; retry');
}

/** Marks the document deleted and queues its events in the same write. */
export async function tombstoneWithEvents<Doc extends object>(
  model: Model<Doc>,
  filter: FilterQuery<Doc>,
  events: (current: Doc & OutboxFields) => EventEnvelope[],
  unsetUniqueKeys: (keyof Doc & string)[] = [],
): Promise<(Doc & OutboxFields) | null> {
  return updateWithEvents(model, filter, () => ({
    set: { deletedAt: new Date() } as unknown as Partial<Doc>,
    // Unique keys are released at once, so the same code or externalId can be used again right away.
    // The test server ignores sparse/partial options on compound indexes: unset only single-field sparse keys.
    unset: unsetUniqueKeys,
    events: (next) => events(next),
  }));
}

export type OutboxRelayOptions = {
  bus: EventBus;
  logger: Logger;
  pollIntervalMs?: number;
  batchSize?: number;
};

type PendingDocument = { _id: unknown; _outbox: EventEnvelope[]; deletedAt: Date | null };

/** Publishes what the outbox holds: at once after a local write (nudge), and by polling after a crash or outage. */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rerun = false;
  private stopped = false;
  private failing = false;
  private readonly models: Model<PendingDocument>[] = [];

  constructor(private readonly options: OutboxRelayOptions) {}

  /** The collections whose documents carry an outbox. */
  watch(...models: Model<any>[]): void { // eslint-disable-line @typescript-eslint/no-explicit-any
    this.models.push(...(models as Model<PendingDocument>[]));
  }

  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.nudge();
      this.timer = setTimeout(tick, this.options.pollIntervalMs ?? 1000);
      this.timer.unref();
    };
    tick();
  }

  /** Ask for a relay pass now; passes never overlap, and a nudge during one schedules another. */
  nudge(): void {
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.rerun && !this.stopped) {
        this.rerun = false;
        this.nudge();
      }
    });
  }

  /** Publishes everything pending right now; resolves when the outbox is empty or the broker refuses. */
  async drain(): Promise<boolean> {
    while (this.running) await this.running;
    await this.pass();
    return !this.failing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.running) await this.running;
  }

  private async pass(): Promise<void> {
    try {
      for (const model of this.models) {
        for (;;) {
          const pending = (await model
            .find({ '_outbox.0': { $exists: true }, deletedAt: { $exists: true } })
            .select('+_outbox deletedAt')
            .limit(this.options.batchSize ?? 100)
            .lean()) as PendingDocument[];
          for (const document of pending) await this.relayDocument(model, document);
          if (pending.length < (this.options.batchSize ?? 100)) break;
        }
      }
      if (this.failing) this.options.logger.info('outbox relay publishing again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.options.logger.warn({ err: error }, 'outbox relay cannot publish yet; events stay queued');
      this.failing = true;
    }
  }

  private async relayDocument(model: Model<PendingDocument>, document: PendingDocument): Promise<void> {
    for (const event of document._outbox) {
      await this.options.bus.publish(event);
      await model.updateOne({ _id: document._id, deletedAt: { $exists: true } }, { $pull: { _outbox: { id: event.id } } });
    }
    if (document.deletedAt) {
      // Only once nothing else is queued on it: a tombstone's last event is out, so it can go.
      await model.deleteOne({ _id: document._id, deletedAt: { $ne: null }, _outbox: { $size: 0 } });
    }
  }
}
