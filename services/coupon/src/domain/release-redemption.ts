import { conflict } from '@affiliate/platform';
import type { CouponRepositories } from '../data-access/repositories';

export type ReleasedRedemption = { redemptionKey: string; released: boolean };

/**
 * The sale service gives a redemption back when its sale could not be recorded. Removing the
 * record is the claim (only one caller gets it), so a repeated release changes nothing, and the
 * same key can redeem again later.
 */
export async function releaseRedemption(
  repositories: CouponRepositories,
  programId: string,
  redemptionKey: string,
): Promise<ReleasedRedemption> {
  const removed = await repositories.redemptions.removeApplied(programId, redemptionKey);
  if (!removed) {
    if ((await repositories.redemptions.byKey(programId, redemptionKey))?.state === 'pending') {
      throw conflict('This redemption is still being counted; retry the release', 'concurrent_modification');
    }
    return { redemptionKey, released: false };
  }
  await repositories.promotionalCodes.releaseCount(programId, removed.promotionalCodeId, redemptionKey);
  await repositories.coupons.releaseCount(programId, removed.couponId, redemptionKey);
  return { redemptionKey, released: true };
}
