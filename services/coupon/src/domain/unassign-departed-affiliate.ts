import { createEvent } from '@affiliate/platform';
import type { CouponRepositories } from '../data-access/repositories';
import { toPromotionalCode } from '../data-access/representations';

/** Takes a deleted affiliate off its codes; each code that changes emits promocode.updated. */
export async function unassignAffiliate(repositories: CouponRepositories, programId: string, affiliateId: string): Promise<number> {
  const codes = await repositories.promotionalCodes.ofAffiliate(programId, affiliateId);
  let unassigned = 0;
  for (const { _id, couponId } of codes) {
    const coupon = await repositories.coupons.byId(programId, couponId);
    if (!coupon) continue; // being deleted with its coupon: its promocode.deleted is the last word
    const updated = await repositories.promotionalCodes.change(programId, _id, (current) =>
      current.affiliateId === affiliateId
        ? {
            set: { affiliateId: null, affiliate: null, affiliateEmailKey: null, updatedAt: new Date() },
            events: (next) => [createEvent('promocode.updated', programId, toPromotionalCode(next, coupon))],
          }
        : null,
    );
    if (updated) unassigned += 1;
  }
  return unassigned;
}

/** After assigning a code: if the affiliate was deleted meanwhile, the deletion's sweep may have missed it. */
export async function unassignIfDeparted(repositories: CouponRepositories, programId: string, affiliateId: string): Promise<void> {
  if (await repositories.departedAffiliates.has(programId, affiliateId)) {
    await unassignAffiliate(repositories, programId, affiliateId);
  }
}
