import { randomUUID } from 'node:crypto';
import type { AutoCouponRule } from '@affiliate/contracts';
import { outboxPlugin, withinPeriod, type PageRequest, type Period, type StoreContext } from '@affiliate/platform';
import { Schema, type Connection, type FilterQuery, type Model } from 'mongoose';
import { CountedStore } from './redemption-counters';
import { presentExternalIdKey } from './unique-keys';

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
  /** Issues each ACTIVE affiliate its generated code of this coupon (README, "Sign-up and approval"); absent or null: none. */
  autoCouponRule?: AutoCouponRule | null;
  /** When the rule was last set: NEW_AFFILIATES issues to affiliates created after it. */
  autoCouponRuleSetAt?: Date | null;
  /** ALL_AFFILIATES: how far issuing to the affiliates ACTIVE when the rule was set has got (in the background); absent: not such a rule. */
  autoCouponRuleProgress?: { issued: number; done: boolean } | null;
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

const metadataEntry = new Schema<MetadataEntry>(
  { key: { type: String, required: true }, value: { type: String, required: true } },
  { _id: false },
);

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
    autoCouponRule: { type: Schema.Types.Mixed, default: null },
    autoCouponRuleSetAt: { type: Date, default: null },
    autoCouponRuleProgress: { type: Schema.Types.Mixed, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    _redemptionKeys: { type: [String], default: [], select: false },
    _promotionalCodeIds: { type: [String], default: [] },
  },
  { versionKey: false, minimize: false, collection: 'coupons' },
);
couponSchema.plugin(outboxPlugin);
couponSchema.index({ externalIdKey: 1 }, { unique: true });
// The list's order, and the index of a createdAt period (a range on its second field); name, its own,
// ending in the list's order too (createdAt then _id); id and externalId are point lookups.
couponSchema.index({ programId: 1, createdAt: -1, _id: -1 });
couponSchema.index({ programId: 1, name: 1, createdAt: -1, _id: -1 });

const couponModel = (connection: Connection): Model<CouponRecord> => connection.model<CouponRecord>('Coupon', couponSchema);

export type CouponLookup = { id?: string; name?: string; externalId?: string };

/** The coupons of each program, with the redemptions they count. */
export class CouponRepository extends CountedStore<CouponRecord> {
  constructor(context: StoreContext) {
    super(context, couponModel, { uniqueKeys: ['externalIdKey'] });
  }

  /** Where the background issuing of an ALL_AFFILIATES rule has got; the program is part of the query. */
  async setRuleProgress(programId: string, couponId: string, progress: { issued: number; done: boolean }): Promise<void> {
    await this.model.collection.updateOne({ _id: couponId as never, programId }, { $set: { autoCouponRuleProgress: progress } });
  }

  /** The newest coupon matching every identifier given: by id or externalId a point lookup, by name a query. */
  async lookUp(programId: string, lookup: CouponLookup): Promise<CouponRecord | null> {
    if (lookup.name === undefined) {
      const found =
        lookup.id !== undefined
          ? await this.byId(programId, lookup.id)
          : await this.byKey(programId, 'externalIdKey', presentExternalIdKey(programId, lookup.externalId ?? ''));
      const matches =
        found && (lookup.externalId === undefined || found.externalIdKey === presentExternalIdKey(programId, lookup.externalId));
      return matches ? found : null;
    }
    const filter: FilterQuery<CouponRecord> = { name: lookup.name };
    if (lookup.id !== undefined) filter._id = lookup.id;
    if (lookup.externalId !== undefined) filter.externalIdKey = presentExternalIdKey(programId, lookup.externalId);
    return (await this.all(programId, filter))[0] ?? null;
  }

  /** A page of the coupons, created within the period when one is given. */
  list(programId: string, createdAt: Period | undefined, page: PageRequest) {
    return this.page(programId, createdAt ? { createdAt: withinPeriod(createdAt) } : {}, page);
  }

  /** Adds a code's id to its coupon before the code is stored (see CouponRecord._promotionalCodeIds). */
  async rememberCode(programId: string, couponId: string, codeId: string): Promise<void> {
    await this.applyIf(programId, couponId, {}, { $addToSet: { _promotionalCodeIds: codeId } });
  }
}
