import { Schema, type Connection, type Model } from 'mongoose';

/** The last click id handed out in a program: one document per program, advanced by an atomic $inc. */
export type ClickCounterDocument = { _id: string; lastClickId: number };

const schema = new Schema<ClickCounterDocument>(
  { _id: { type: String, required: true }, lastClickId: { type: Number, required: true } },
  { versionKey: false },
);

export function clickCounterModel(connection: Connection): Model<ClickCounterDocument> {
  return connection.model<ClickCounterDocument>('ClickCounter', schema, 'click_counters');
}
