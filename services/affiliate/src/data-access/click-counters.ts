import { unlessKeyTaken, UniqueKeyConflict } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/** The last click id handed out in a program: one document per program, advanced by an atomic $inc. */
export type ClickCounterDocument = { _id: string; lastClickId: number };

const schema = new Schema<ClickCounterDocument>(
  { _id: { type: String, required: true }, lastClickId: { type: Number, required: true } },
  { versionKey: false },
);

const clickCounterModel = (connection: Connection): Model<ClickCounterDocument> =>
  connection.model<ClickCounterDocument>('ClickCounter', schema, 'click_counters');

export class ClickCounterRepository {
  private readonly model: Model<ClickCounterDocument>;

  constructor(context: { connection: Connection }) {
    this.model = clickCounterModel(context.connection);
  }

  /**
   * Reserves `count` consecutive click ids of the program and answers the first. Each caller takes
   * the counter's value from before its own atomic $inc (the pre-image, which the server copies under
   * the document's lock), so no two callers' ranges overlap. Not the value after the $inc: the local
   * server may return another caller's later state there (DESIGN.md section 8,
   * services/platform/test/database-guarantees.test.ts).
   */
  async reserve(programId: string, count: number): Promise<number> {
    for (;;) {
      const before = await unlessKeyTaken(() =>
        this.model.collection.findOneAndUpdate(
          { _id: programId as never },
          { $inc: { lastClickId: count } },
          { upsert: true, returnDocument: 'before' },
        ),
      );
      // No pre-image: this call created the counter, at `count`.
      if (!(before instanceof UniqueKeyConflict)) return (before?.lastClickId ?? 0) + 1;
      // Two first clicks of a program both tried to create the counter; the loser increments it.
    }
  }
}
