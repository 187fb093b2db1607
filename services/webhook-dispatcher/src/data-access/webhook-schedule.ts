import { ignoringDuplicateKey } from '@affiliate/platform';
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
};

const schema = new Schema<ScheduledAttemptDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    endpointId: { type: String, required: true },
    dueAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ dueAt: 1 });

const scheduledAttemptModel = (connection: Connection): Model<ScheduledAttemptDocument> =>
  connection.model<ScheduledAttemptDocument>('ScheduledAttempt', schema, 'webhook_schedule');

/** `dueAt` comes with what the schedule reads (the backlog's age), not with what the fan-out pushes. */
export type DueDelivery = { _id: string; programId: string; endpointId: string; dueAt?: Date };

export class ScheduleRepository {
  private readonly model: Model<ScheduledAttemptDocument>;

  constructor(context: { connection: Connection }) {
    this.model = scheduledAttemptModel(context.connection);
  }

  /**
   * The entries due now, earliest first, across every program: the one read without a program,
   * because the scheduler serves them all (and shares its slots between them in turn).
   */
  dueAcrossPrograms(limit: number): Promise<DueDelivery[]> {
    return this.model.find({ dueAt: { $lte: new Date() } }).sort({ dueAt: 1 }).limit(limit).lean();
  }

  async schedule(delivery: DueDelivery, dueAt: Date): Promise<void> {
    await this.model.collection.updateOne(
      { _id: delivery._id as never, programId: delivery.programId },
      { $set: { dueAt }, $setOnInsert: { endpointId: delivery.endpointId } },
      { upsert: true },
    );
  }

  /** Puts a new delivery on the schedule unless it is there (a redelivered event). */
  async ensure(delivery: DueDelivery, dueAt: Date): Promise<void> {
    // A simultaneous copy of the event may insert it first.
    await ignoringDuplicateKey(
      this.model.collection.updateOne({ _id: delivery._id as never, programId: delivery.programId }, { $setOnInsert: { endpointId: delivery.endpointId, dueAt } }, { upsert: true }),
    );
  }

  async unschedule(programId: string, deliveryId: string): Promise<void> {
    await this.model.collection.deleteOne({ _id: deliveryId as never, programId });
  }
}
