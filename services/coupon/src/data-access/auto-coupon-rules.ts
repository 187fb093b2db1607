import type { StoreContext } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

type RuleIndexDocument = { _id: string; couponIds: string[] };

const schema = new Schema<RuleIndexDocument>(
  { _id: { type: String, required: true }, couponIds: { type: [String], default: [] } },
  { versionKey: false, collection: 'auto_coupon_rules' },
);

const ruleIndexModel = (connection: Connection): Model<RuleIndexDocument> =>
  (connection.models.AutoCouponRuleIndex as Model<RuleIndexDocument> | undefined) ??
  connection.model<RuleIndexDocument>('AutoCouponRuleIndex', schema);

/**
 * Which coupons of a program have an autoCouponRule: one document per program, read by _id for every
 * affiliate event (no scan of the coupons per event). A coupon is added before its rule is stored and
 * removed after it is cleared, so the list may name a coupon without a rule (skipped on read), never
 * miss one that has it.
 */
export class AutoCouponRuleIndex {
  private readonly model: Model<RuleIndexDocument>;

  constructor(context: StoreContext) {
    this.model = ruleIndexModel(context.connection);
  }

  async couponIdsOf(programId: string): Promise<string[]> {
    return ((await this.model.collection.findOne({ _id: programId as never })) as RuleIndexDocument | null)?.couponIds ?? [];
  }

  async add(programId: string, couponId: string): Promise<void> {
    await this.model.collection.updateOne({ _id: programId as never }, { $addToSet: { couponIds: couponId } }, { upsert: true });
  }

  async remove(programId: string, couponId: string): Promise<void> {
    await this.model.collection.updateOne({ _id: programId as never }, { $pull: { couponIds: couponId } as never });
  }
}
