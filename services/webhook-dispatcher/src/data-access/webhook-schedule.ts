import { GroupCommit, SharedInserts } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * The deliveries waiting for a scheduled attempt, and nothing else: one entry per pending delivery,
 * removed once it succeeds or fails for good. Finding what is due reads this small collection, never
 * the delivery log, which grows with every event ever delivered.
 */
export type ScheduledAttemptDocument = {
  /** The delivery's id. */
  _id: string;
  programId: string;
  endpointId: string;
  /** When the next attempt is due; pushed to the end of the lease while an attempt is in flight. */
  dueAt: Date;
  /**
   * Set while a new delivery, leased to the dispatcher that fanned it out, waits there for a free
   * slot: due since then and not sent, though its `dueAt` (the lease's end) lies ahead. Cleared when
   * its first attempt starts or it is claimed, so the backlog gauges can read the database alone.
   */
  waitingSince?: Date;
};

const schema = new Schema<ScheduledAttemptDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    endpointId: { type: String, required: true },
    dueAt: { type: Date, required: true },
    waitingSince: { type: Date, required: false },
  },
  { versionKey: false },
);
schema.index({ dueAt: 1 });
// Sparse: only the deliveries waiting in a dispatcher for their first attempt carry it.
schema.index({ waitingSince: 1 }, { sparse: true });

const scheduledAttemptModel = (connection: Connection): Model<ScheduledAttemptDocument> =>
  connection.model<ScheduledAttemptDocument>('ScheduledAttempt', schema, 'webhook_schedule');

/** Deliveries due and not being sent, across programs, and when the oldest of them came due (epoch ms). */
export type ScheduleBacklog = { due: number; oldestDueAt: number | undefined };

/** `dueAt` comes with what the schedule reads (the backlog's age), not with what the fan-out pushes. */
export type DueDelivery = { _id: string; programId: string; endpointId: string; dueAt?: Date };

/** A schedule entry as a sender saw it: the delivery and the times its entry may have been due at. */
type SeenEntry = { id: string; dueAt: Date[] };

/**
 * Entries changed by one write at most, and writes at once per program, for the changes every attempt
 * makes (its first attempt starts, its delivery ends): those of attempts running side by side share a
 * write. No timer: a lone change is written on the next turn.
 */
const ENTRY_BATCHES = { maxBatch: 200, maxInFlight: 2 };

export class ScheduleRepository {
  private readonly model: Model<ScheduledAttemptDocument>;
  /** Deliveries whose first attempt starts, by program: their entries stop waiting. */
  private readonly started: GroupCommit<string, void>;
  /** Deliveries ended for good, by program: their entries go, if still as their senders saw them. */
  private readonly ended: GroupCommit<SeenEntry, void>;
  /** New deliveries' entries, by program: the fan-outs running side by side share a write. */
  private readonly fannedOut: SharedInserts<ScheduledAttemptDocument>;

  constructor(context: { connection: Connection }) {
    this.model = scheduledAttemptModel(context.connection);
    this.fannedOut = new SharedInserts(this.model, ENTRY_BATCHES);
    this.started = new GroupCommit<string, void>(async (programId, ids) => {
      await this.model.collection.updateMany({ _id: { $in: ids } as never, programId }, { $unset: { waitingSince: '' } });
      return ids.map(() => undefined);
    }, ENTRY_BATCHES);
    this.ended = new GroupCommit<SeenEntry, void>(async (programId, entries) => {
      await this.model.collection.deleteMany({
        _id: { $in: entries.map((entry) => entry.id) } as never,
        programId,
        $or: entries.map((entry) => ({ _id: entry.id as never, dueAt: { $in: entry.dueAt } })),
      });
      return entries.map(() => undefined);
    }, ENTRY_BATCHES);
  }

  /**
   * The entries due now, earliest first, across every program: the one read without a program,
   * because the scheduler serves them all (and shares its slots between them in turn).
   */
  dueAcrossPrograms(limit: number): Promise<DueDelivery[]> {
    return this.model
      .find({ dueAt: { $lte: new Date() } })
      .sort({ dueAt: 1 })
      .limit(limit)
      .lean();
  }

  /**
   * The backlog of every dispatcher replica at once, the same whoever reads it: entries due now
   * (nobody holds a lease on them) and new deliveries waiting in a dispatcher for a slot. Two
   * indexed counts and two indexed reads of one document; across programs, like the schedule.
   */
  async backlogAcrossPrograms(): Promise<ScheduleBacklog> {
    const now = new Date();
    const waiting = { waitingSince: { $exists: true } };
    // A waiting entry whose lease ran out is due as well: counted once, in `waiting`.
    const [dueCount, waitingCount, oldestDue, oldestWaiting] = await Promise.all([
      this.model.countDocuments({ dueAt: { $lte: now }, waitingSince: { $exists: false } }),
      this.model.countDocuments(waiting),
      this.model
        .findOne({ dueAt: { $lte: now } })
        .sort({ dueAt: 1 })
        .select('dueAt')
        .lean(),
      this.model.findOne(waiting).sort({ waitingSince: 1 }).select('waitingSince').lean(),
    ]);
    const times = [oldestDue?.dueAt, oldestWaiting?.waitingSince].filter((at): at is Date => at instanceof Date).map((at) => at.getTime());
    return { due: dueCount + waitingCount, oldestDueAt: times.length > 0 ? Math.min(...times) : undefined };
  }

  /** The first attempt of a delivery waiting for a slot starts: it is no longer waiting (batched with others). */
  sending(delivery: DueDelivery): Promise<void> {
    return this.started.submit(delivery.programId, delivery._id);
  }

  async schedule(delivery: DueDelivery, dueAt: Date): Promise<void> {
    await this.model.collection.updateOne(
      { _id: delivery._id as never, programId: delivery.programId },
      { $set: { dueAt }, $unset: { waitingSince: '' }, $setOnInsert: { endpointId: delivery.endpointId } },
      { upsert: true },
    );
  }

  /**
   * Puts the new deliveries of one event (a fan-out) on the schedule in one write (shared with the
   * other fan-outs of the program running meanwhile), each unless it is there (a redelivered event),
   * due at `dueAt` (their lease's end) and waiting since `waitingSince`.
   */
  async ensureAll(programId: string, deliveries: DueDelivery[], dueAt: Date, waitingSince: Date): Promise<void> {
    await this.fannedOut.insertEach(
      programId,
      deliveries.map(({ _id, endpointId }) => ({ _id, programId, endpointId, dueAt, waitingSince })),
    );
  }

  /**
   * The delivery ended for good (batched with the others ending meanwhile): its entry goes, if it is
   * still due at one of the times `dueAt` the sender saw. One written since (a recover or a replay
   * making the delivery pending again) stays, so that delivery is sent; an entry left behind is
   * found due later and discarded by the sender that claims it.
   */
  unschedule(programId: string, deliveryId: string, dueAt: Date[]): Promise<void> {
    return this.ended.submit(programId, { id: deliveryId, dueAt });
  }
}
