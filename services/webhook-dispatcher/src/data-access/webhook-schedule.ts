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

export function scheduledAttemptModel(connection: Connection): Model<ScheduledAttemptDocument> {
  return connection.model<ScheduledAttemptDocument>('ScheduledAttempt', schema, 'webhook_schedule');
}
