import { randomUUID } from 'node:crypto';
import { outboxPlugin } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

export type MetadataEntry = { key: string; value: string };

export type CouponRecord = {
  _id: string;
  programId: string;
  name: string | null;
  externalId: string | null;
  externalIdKey: string;
  couponType: 'PERCENTAGE' | 'FLAT';
  percentOff: number | null;
  /** Integer minor units of `currency` (platform money module). */
  amountOffMinor: number | null;
  currency: string | null;
  duration: 'once' | 'forever' | 'repeating';
  durationInMonths: number | null;
  maxRedemptions: number | null;
  timesRedeemed: number;
  couponCategory: 'CUSTOMER' | 'PAYOUT';
  limitToProducts: boolean;
  productIds: string[];
  collectionIds: string[];
  valid: boolean;
  redeemBy: Date | null;
  integrationType: string | null;
  /** Stored as entries: integrator-chosen keys never become MongoDB field names (`$`, `.`). */
  metadata: MetadataEntry[];
  createdAt: Date;
  updatedAt: Date;
  /** Redemption keys whose counting is under way (see redemption-counters.ts); never read back. */
  _redemptionKeys?: string[];
  /**
   * Ids of the coupon's promotional codes, added before each code is stored, so reading a coupon
   * with its codes is a lookup by _id rather than a query on couponId (which the local server
   * answers by scanning every code). Absent on coupons stored before it existed.
   */
  _promotionalCodeIds?: string[];
};

const metadataEntry = new Schema<MetadataEntry>({ key: { type: String, required: true }, value: { type: String, required: true } }, { _id: false });

const couponSchema = new Schema<CouponRecord>(
  {
    _id: { type: String, default: () => randomUUID() },
    programId: { type: String, required: true },
    name: { type: String, default: null },
    externalId: { type: String, default: null },
    externalIdKey: { type: String, required: true },
    couponType: { type: String, required: true },
    percentOff: { type: Number, default: null },
    amountOffMinor: { type: Number, default: null },
    currency: { type: String, default: null },
    duration: { type: String, required: true },
    durationInMonths: { type: Number, default: null },
    maxRedemptions: { type: Number, default: null },
    timesRedeemed: { type: Number, default: 0 },
    couponCategory: { type: String, required: true },
    limitToProducts: { type: Boolean, required: true },
    productIds: { type: [String], default: [] },
    collectionIds: { type: [String], default: [] },
    valid: { type: Boolean, required: true },
    redeemBy: { type: Date, default: null },
    integrationType: { type: String, default: null },
    metadata: { type: [metadataEntry], default: [] },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    _redemptionKeys: { type: [String], default: [], select: false },
    _promotionalCodeIds: { type: [String], default: [] },
  },
  { versionKey: false, minimize: false, collection: 'coupons' },
);
couponSchema.plugin(outboxPlugin);
couponSchema.index({ programId: 1, externalIdKey: 1 }, { unique: true });
couponSchema.index({ programId: 1, createdAt: -1, _id: -1 });
couponSchema.index({ programId: 1, name: 1, createdAt: -1 });

export function couponModel(connection: Connection): Model<CouponRecord> {
  return connection.model<CouponRecord>('Coupon', couponSchema);
}
