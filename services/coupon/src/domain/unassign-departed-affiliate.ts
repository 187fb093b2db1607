import { createEvent, updateWithEvents } from '@affiliate/platform';
import type { CouponModels } from '../data-access/models';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { departedAffiliateId } from '../data-access/departed-affiliate-model';
import { findCouponRecord } from '../data-access/reads';
import { toPromotionalCode } from '../data-access/representations';

/** Takes a deleted affiliate off its codes; each code that changes emits promocode.updated. */
export async function unassignAffiliate(models: CouponModels, programId: string, affiliateId: string): Promise<number> {
  const codes = await models.promotionalCodes.find({ programId, affiliateId }).select('_id couponId').lean<PromotionalCodeRecord[]>();
  let unassigned = 0;
  for (const { _id, couponId } of codes) {
    const coupon = await findCouponRecord(models, programId, couponId);
    if (!coupon) continue; // being deleted with its coupon: its promocode.deleted is the last word
    const updated = await updateWithEvents(models.promotionalCodes, { programId, _id, affiliateId }, () => ({
      set: { affiliateId: null, affiliate: null, affiliateEmailKey: null, updatedAt: new Date() },
      events: (next) => [createEvent('promocode.updated', programId, toPromotionalCode(next, coupon))],
    }));
    if (updated) unassigned += 1;
  }
  return unassigned;
}

/** After assigning a code: if the affiliate was deleted meanwhile, the deletion's sweep may have missed it. */
export async function unassignIfDeparted(models: CouponModels, programId: string, affiliateId: string): Promise<void> {
  if (await models.departedAffiliates.exists({ _id: departedAffiliateId(programId, affiliateId) })) {
    await unassignAffiliate(models, programId, affiliateId);
  }
}
