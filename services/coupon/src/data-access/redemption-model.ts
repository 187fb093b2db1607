import { randomUUID } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';

/** `pending`: counters being incremented; `applied`: counted, the stored result is replayed for the same key. */
export type RedemptionState = 'pending' | 'applied';

export type RedemptionRecord = {
  _id: string;
  programId: string;
  redemptionKey: string;
  state: RedemptionState;
  promotionalCodeId: string;
  couponId: string;
  affiliateId: string;
  code: string;
  createdAt: Date;
  /** When the current holder claimed the pending redemption; a stale claim is taken over. */
  claimedAt: Date;
};

const redemptionSchema = new Schema<RedemptionRecord>(
  {
    _id: { type: String, default: () => randomUUID() },
    programId: { type: String, required: true },
    redemptionKey: { type: String, required: true },
    state: { type: String, required: true },
    promotionalCodeId: { type: String, required: true },
    couponId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    code: { type: String, required: true },
    createdAt: { type: Date, required: true },
    claimedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'redemptions' },
);
redemptionSchema.index({ programId: 1, redemptionKey: 1 }, { unique: true });

export function redemptionModel(connection: Connection): Model<RedemptionRecord> {
  return connection.model<RedemptionRecord>('Redemption', redemptionSchema);
}
