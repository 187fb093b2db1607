import { byIdInProgram, isKeyTaken, writeErrorsOf } from '@affiliate/platform';
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
  {
    clickId: { type: Number, required: true },
    linkId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    at: { type: Date, required: true },
  },
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

  /**
   * Adds each click to its visitor's document, creating it at the first, in one unordered command.
   * Two first clicks of one visitor (another process's, or one of the same command on a server that
   * runs them side by side) may both try to create the document: each loser is written again, and
   * then updates it.
   */
  async recordClicks(programId: string, clicks: (VisitorClick & { visitorId: string })[]): Promise<void> {
    let pending = clicks;
    while (pending.length > 0) {
      const operations = pending.map(({ visitorId, ...click }) => ({
        updateOne: {
          filter: { _id: visitorIdOf(programId, visitorId) as never },
          update: this.adding(programId, click) as never,
          upsert: true,
        },
      }));
      try {
        await this.model.collection.bulkWrite(operations, { ordered: false });
        return;
      } catch (error) {
        const failed = writeErrorsOf(error);
        if (!failed.every(isKeyTaken)) throw error;
        const batch = pending;
        pending = failed.map((write) => batch[write.index] as (typeof batch)[number]);
      }
    }
  }

  private adding(programId: string, click: VisitorClick) {
    return {
      $setOnInsert: { programId },
      $push: {
        earliest: { $each: [click], $sort: { at: 1 }, $slice: KEPT },
        latest: { $each: [click], $sort: { at: 1 }, $slice: -KEPT },
      },
    };
  }

  /** The visitor's kept clicks, oldest first, each once. */
  async clicksOf(programId: string, visitorId: string): Promise<VisitorClick[]> {
    const visitor = await byIdInProgram(this.model, programId, visitorIdOf(programId, visitorId));
    if (!visitor) return [];
    const byId = new Map([...visitor.earliest, ...visitor.latest].map((click) => [click.clickId, click]));
    return [...byId.values()].sort((a, b) => a.at.getTime() - b.at.getTime() || a.clickId - b.clickId);
  }
}
