import { Schema, type Connection, type Model } from 'mongoose';
import type { EventCursor } from './webhook-events';

/**
 * A new endpoint's backfill in progress: the stored events of [since, until) of its types still to
 * queue, walked oldest first from `cursor`. One document per endpoint (its id), removed when done;
 * the cursor is written after each page, so a restart resumes there (and a page queued twice makes
 * no second delivery: a delivery's id is its event's and endpoint's).
 */
export type BackfillDocument = {
  _id: string;
  programId: string;
  /** The concrete public event types the endpoint subscribed to when it was created. */
  eventTypes: string[];
  since: Date;
  until: Date;
  cursor: EventCursor | null;
  createdAt: Date;
};

const schema = new Schema<BackfillDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    eventTypes: { type: [String], required: true },
    since: { type: Date, required: true },
    until: { type: Date, required: true },
    cursor: { type: Schema.Types.Mixed, default: null },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ createdAt: 1 });

const backfillModel = (connection: Connection): Model<BackfillDocument> =>
  connection.model<BackfillDocument>('WebhookBackfill', schema, 'webhook_backfills');

export class BackfillRepository {
  private readonly model: Model<BackfillDocument>;

  constructor(context: { connection: Connection }) {
    this.model = backfillModel(context.connection);
  }

  async start(backfill: BackfillDocument): Promise<void> {
    await this.model.collection.insertOne(backfill as never);
  }

  /** The oldest backfills in progress, across programs: the dispatcher works on every program's in turn. */
  inProgressAcrossPrograms(limit: number): Promise<BackfillDocument[]> {
    return this.model.find({}).sort({ createdAt: 1 }).limit(limit).lean();
  }

  /** Moves the cursor on only from where the caller read it: false when another replica moved it first. */
  async advance(backfill: BackfillDocument, cursor: EventCursor): Promise<boolean> {
    const moved = await this.model.collection.updateOne(
      { _id: backfill._id as never, programId: backfill.programId, cursor: backfill.cursor as never },
      { $set: { cursor } },
    );
    return moved.modifiedCount === 1;
  }

  async finish(programId: string, endpointId: string): Promise<void> {
    await this.model.collection.deleteOne({ _id: endpointId as never, programId });
  }
}
