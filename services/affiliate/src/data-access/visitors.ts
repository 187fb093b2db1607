import { byIdInProgram, isDuplicateKey } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

export type VisitorClick = { clickId: number; linkId: string; affiliateId: string; at: Date };

/**
 * A visitor's counted clicks in a program, for referrals by visitor id: the earliest and the latest
 * few, kept sorted by the database on each click, so a resolution reads one document by `_id`
 * (`<programId>:<visitorId>`) whatever the visitor's history.
 */
export type VisitorDocument = { _id: string; programId: string; earliest: VisitorClick[]; latest: VisitorClick[] };

/** Enough for the first-click and last-click models while clicks expire one by one. */
const KEPT = 10;

const clickSchema = new Schema<VisitorClick>(
  { clickId: { type: Number, required: true }, linkId: { type: String, required: true }, affiliateId: { type: String, required: true }, at: { type: Date, required: true } },
  { _id: false },
);
const schema = new Schema<VisitorDocument>(
  { _id: { type: String, required: true }, programId: { type: String, required: true }, earliest: [clickSchema], latest: [clickSchema] },
  { versionKey: false },
);

const visitorModel = (connection: Connection): Model<VisitorDocument> => connection.model<VisitorDocument>('Visitor', schema, 'visitors');

const visitorIdOf = (programId: string, visitorId: string) => `${programId}:${visitorId}`;

export class VisitorRepository {
  private readonly model: Model<VisitorDocument>;

  constructor(context: { connection: Connection }) {
    this.model = visitorModel(context.connection);
  }

  async recordClick(programId: string, visitorId: string, click: VisitorClick): Promise<void> {
    const update = {
      $setOnInsert: { programId },
      $push: {
        earliest: { $each: [click], $sort: { at: 1 }, $slice: KEPT },
        latest: { $each: [click], $sort: { at: 1 }, $slice: -KEPT },
      },
    };
    for (;;) {
      try {
        await this.model.collection.updateOne({ _id: visitorIdOf(programId, visitorId) as never }, update as never, { upsert: true });
        return;
      } catch (error) {
        // Two first clicks of one visitor both tried to create the document; the loser updates it.
        if (!isDuplicateKey(error)) throw error;
      }
    }
  }

  /** The visitor's kept clicks, oldest first, each once. */
  async clicksOf(programId: string, visitorId: string): Promise<VisitorClick[]> {
    const visitor = await byIdInProgram(this.model, programId, visitorIdOf(programId, visitorId));
    if (!visitor) return [];
    const byId = new Map([...visitor.earliest, ...visitor.latest].map((click) => [click.clickId, click]));
    return [...byId.values()].sort((a, b) => a.at.getTime() - b.at.getTime() || a.clickId - b.clickId);
  }
}
