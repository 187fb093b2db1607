import type { AffiliateSummary } from '@affiliate/contracts';
import { createEvent, updateWithEvents } from '@affiliate/platform';
import { departedAffiliateId } from '../data-access/departed-affiliate-model';
import type { CouponModels } from '../data-access/models';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { findCouponRecord } from '../data-access/reads';
import { toPromotionalCode } from '../data-access/representations';
import { unassignAffiliate } from './unassign-departed-affiliate';

const sameSummary = (a: AffiliateSummary | null, b: AffiliateSummary): boolean =>
  a !== null && a.firstName === b.firstName && a.lastName === b.lastName && a.email === b.email;

/**
 * affiliate.updated: the summary embedded in the affiliate's codes follows the affiliate. Codes
 * whose summary is unchanged (a link was added, say) are left alone and emit nothing; an event
 * older than the one last applied never overwrites it.
 */
export async function refreshAffiliateOnCodes(
  models: CouponModels,
  programId: string,
  affiliate: AffiliateSummary,
  affiliateUpdatedAt: Date,
): Promise<number> {
  const codes = await models.promotionalCodes.find({ programId, affiliateId: affiliate.id }).lean<PromotionalCodeRecord[]>();
  let refreshed = 0;
  for (const code of codes) {
    if (sameSummary(code.affiliate, affiliate)) continue;
    const coupon = await findCouponRecord(models, programId, code.couponId);
    if (!coupon) continue;
    const updated = await updateWithEvents(
      models.promotionalCodes,
      { programId, _id: code._id, affiliateId: affiliate.id, $or: [{ affiliateUpdatedAt: null }, { affiliateUpdatedAt: { $lt: affiliateUpdatedAt } }] },
      () => ({
        set: { affiliate, affiliateEmailKey: affiliate.email.toLowerCase(), affiliateUpdatedAt, updatedAt: new Date() },
        events: (next) => [createEvent('promocode.updated', programId, toPromotionalCode(next, coupon))],
      }),
    );
    if (updated) refreshed += 1;
  }
  return refreshed;
}

/** affiliate.deleted: remembered first, so a code assigned concurrently is caught by its writer. */
export async function unassignDeletedAffiliate(models: CouponModels, programId: string, affiliateId: string): Promise<number> {
  await models.departedAffiliates.updateOne(
    { _id: departedAffiliateId(programId, affiliateId) },
    { $setOnInsert: { programId, affiliateId, departedAt: new Date() } },
    { upsert: true },
  );
  return unassignAffiliate(models, programId, affiliateId);
}
