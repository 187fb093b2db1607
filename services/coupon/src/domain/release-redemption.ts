import { conflict } from '@affiliate/platform';
import type { CouponModels } from '../data-access/models';
import { releaseCount } from '../data-access/redemption-counters';
import type { RedemptionRecord } from '../data-access/redemption-model';

export type ReleasedRedemption = { redemptionKey: string; released: boolean };

/**
 * The sale service gives a redemption back when its sale could not be recorded. Removing the
 * record is the claim (only one caller gets it), so a repeated release changes nothing, and the
 * same key can redeem again later.
 */
export async function releaseRedemption(models: CouponModels, programId: string, redemptionKey: string): Promise<ReleasedRedemption> {
  const removed = await models.redemptions.findOneAndDelete({ programId, redemptionKey, state: 'applied' }).lean<RedemptionRecord>();
  if (!removed) {
    if (await models.redemptions.exists({ programId, redemptionKey, state: 'pending' })) {
      throw conflict('This redemption is still being counted; retry the release');
    }
    return { redemptionKey, released: false };
  }
  await releaseCount(models, 'promotionalCodes', programId, removed.promotionalCodeId, redemptionKey);
  await releaseCount(models, 'coupons', programId, removed.couponId, redemptionKey);
  return { redemptionKey, released: true };
}
