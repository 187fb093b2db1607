import type { Model } from 'mongoose';
import type { CouponModels } from './models';

type Counted = { _id: string; programId: string; maxRedemptions: number | null; timesRedeemed: number; _redemptionKeys: string[] };

export type CountOutcome = 'counted' | 'limit reached' | 'gone';

/** The two documents a redemption counts on: its code and the code's coupon. */
export type Counter = 'promotionalCodes' | 'coupons';

const counterModel = (models: CouponModels, counter: Counter) => models[counter] as unknown as Model<Counted>;

/**
 * Adds one redemption to a code or a coupon, atomically within the document and never past its
 * limit: the write only matches while timesRedeemed is below the maxRedemptions it was read with.
 * The redemption key travels with the increment, so counting the same redemption twice (a retry
 * after a crash) is a no-op that reports success.
 */
export async function countRedemption(
  models: CouponModels,
  counter: Counter,
  programId: string,
  id: string,
  redemptionKey: string,
): Promise<CountOutcome> {
  const documents = counterModel(models, counter);
  // The limit read can be changed by a PUT between read and write; a few re-reads settle that.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await documents.findOne({ programId, _id: id }).select('maxRedemptions timesRedeemed').lean<Counted>();
    if (!current) return 'gone';
    const limit = current.maxRedemptions ?? null;
    if (limit === null || current.timesRedeemed < limit) {
      const result = await documents.updateOne(
        { programId, _id: id, maxRedemptions: limit, _redemptionKeys: { $ne: redemptionKey }, ...(limit === null ? {} : { timesRedeemed: { $lt: limit } }) },
        { $inc: { timesRedeemed: 1 }, $push: { _redemptionKeys: redemptionKey } },
      );
      if (result.modifiedCount === 1) return 'counted';
    }
    if (await documents.exists({ programId, _id: id, _redemptionKeys: redemptionKey })) return 'counted';
    if (limit !== null && current.timesRedeemed >= limit) return 'limit reached';
  }
  return 'limit reached';
}

/** Compensation: takes back exactly the increment this redemption key made, if it made one. */
export async function uncountRedemption(models: CouponModels, counter: Counter, programId: string, id: string, redemptionKey: string): Promise<void> {
  await counterModel(models, counter).updateOne(
    { programId, _id: id, _redemptionKeys: redemptionKey },
    { $inc: { timesRedeemed: -1 }, $pull: { _redemptionKeys: redemptionKey } },
  );
}

/** A released redemption (its sale never came to be) gives its count back. */
export async function releaseCount(models: CouponModels, counter: Counter, programId: string, id: string, redemptionKey: string): Promise<void> {
  await counterModel(models, counter).updateOne(
    { programId, _id: id, timesRedeemed: { $gt: 0 } },
    { $inc: { timesRedeemed: -1 }, $pull: { _redemptionKeys: redemptionKey } },
  );
}

/** Once the redemption is recorded as applied, its key has done its job on the counters. */
export async function forgetRedemptionKey(models: CouponModels, programId: string, ids: { promotionalCodeId: string; couponId: string }, redemptionKey: string) {
  await Promise.all([
    models.promotionalCodes.updateOne({ programId, _id: ids.promotionalCodeId }, { $pull: { _redemptionKeys: redemptionKey } }),
    models.coupons.updateOne({ programId, _id: ids.couponId }, { $pull: { _redemptionKeys: redemptionKey } }),
  ]);
}
