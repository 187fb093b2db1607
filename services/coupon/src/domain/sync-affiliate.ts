import type { AffiliateSummary } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import type { CouponRepositories } from '../data-access/repositories';
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
  repositories: CouponRepositories,
  programId: string,
  affiliate: AffiliateSummary,
  affiliateUpdatedAt: Date,
): Promise<number> {
  const codes = await repositories.promotionalCodes.ofAffiliate(programId, affiliate.id);
  let refreshed = 0;
  for (const code of codes) {
    if (sameSummary(code.affiliate, affiliate)) continue;
    const coupon = await repositories.coupons.byId(programId, code.couponId);
    if (!coupon) continue;
    const updated = await repositories.promotionalCodes.change(programId, code._id, (current) =>
      // Still this affiliate's code, and the event is newer than the copy it holds.
      current.affiliateId === affiliate.id && (current.affiliateUpdatedAt === null || current.affiliateUpdatedAt < affiliateUpdatedAt)
        ? {
            set: { affiliate, affiliateEmailKey: affiliate.email.toLowerCase(), affiliateUpdatedAt, updatedAt: new Date() },
            events: (next) => [createEvent('promocode.updated', programId, toPromotionalCode(next, coupon))],
          }
        : null,
    );
    if (updated) refreshed += 1;
  }
  return refreshed;
}

/** affiliate.deleted: remembered first, so a code assigned concurrently is caught by its writer. */
export async function unassignDeletedAffiliate(repositories: CouponRepositories, programId: string, affiliateId: string): Promise<number> {
  await repositories.departedAffiliates.record(programId, affiliateId);
  return unassignAffiliate(repositories, programId, affiliateId);
}
