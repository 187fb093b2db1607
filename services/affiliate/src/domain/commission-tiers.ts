import type { CommissionTier, CommissionTierRule } from '@affiliate/contracts';
import { toMinorUnits } from '@affiliate/platform';
import type { AffiliateDocument } from '../data-access/affiliates';
import type { CommissionPlanDocument } from '../data-access/commission-plans';
import type { Repositories } from '../data-access/repositories';
import { affiliateUpdated } from './affiliate-events';
import { linksOfAffiliate } from './affiliate-links';
import { planOf } from './commission-plans';
import { countSale, uncount, type AttributedObject } from './link-stats';
import { programSettingsOf } from './program-settings';

type StoredTier = NonNullable<AffiliateDocument['commissionTier']>;

/**
 * The highest tier whose threshold the affiliate's sales (count, or revenue in the program's
 * reporting currency: a threshold is one amount, so it is in one currency) have reached; null: the base rate.
 */
export function tierReached(
  tiers: CommissionTierRule[],
  totals: { sales: number; revenueCents: number },
  currency: string,
): CommissionTier | null {
  let reached: CommissionTier | null = null;
  for (const [index, tier] of tiers.entries()) {
    const value = tier.metric === 'SALES_COUNT' ? totals.sales : totals.revenueCents;
    const threshold = tier.metric === 'SALES_COUNT' ? tier.threshold : toMinorUnits(tier.threshold, currency);
    if (value >= threshold) reached = { level: index + 1, metric: tier.metric, threshold: tier.threshold, rate: tier.rate };
  }
  return reached;
}

/** The tier an affiliate stands at on this plan, from its live sales (counted by the link statistics). */
export async function tierOn(
  repositories: Repositories,
  affiliate: AffiliateDocument,
  plan: CommissionPlanDocument | null,
): Promise<StoredTier | null> {
  if (!plan || plan.tiers.length === 0) return null;
  const { reportingCurrency } = await programSettingsOf(repositories, affiliate.programId);
  const reached = tierReached(
    plan.tiers,
    await repositories.linkActivity.salesOfAffiliate(affiliate.programId, affiliate._id, reportingCurrency),
    reportingCurrency,
  );
  return reached ? { ...reached, planId: plan._id } : null;
}

const sameTier = (a: StoredTier | null | undefined, b: StoredTier | null) =>
  (a ?? null) === b ||
  (a !== null &&
    a !== undefined &&
    b !== null &&
    a.planId === b.planId &&
    a.level === b.level &&
    a.rate === b.rate &&
    a.threshold === b.threshold);

/**
 * After a sale is counted or uncounted: an affiliate whose tier changed gets it stored, with
 * affiliate.updated in the same write. Sales recorded after that earn the tier's rate.
 */
export async function reviewTier(repositories: Repositories, programId: string, affiliateId: string): Promise<void> {
  const affiliate = await repositories.affiliates.byId(programId, affiliateId);
  if (!affiliate) return;
  const plan = await planOf(repositories, affiliate);
  if ((!plan || plan.tiers.length === 0) && !affiliate.commissionTier) return;
  const tier = await tierOn(repositories, affiliate, plan);
  if (sameTier(affiliate.commissionTier, tier)) return;
  const summary = plan ? { id: plan._id, name: plan.name } : null;
  await repositories.affiliates.change(programId, affiliateId, async (current) => {
    if (sameTier(current.commissionTier, tier)) return null;
    const links = await linksOfAffiliate(repositories, programId, affiliateId);
    return { set: { commissionTier: tier, updatedAt: new Date() }, events: (next) => [affiliateUpdated(next, links, summary)] };
  });
}

/** sale.created and sale.updated: counted on its link, then the affiliate's tier looked at again. */
export async function countSaleAndReviewTier(
  repositories: Repositories,
  programId: string,
  sale: AttributedObject & { totalEarned: number; currency?: string },
): Promise<void> {
  await countSale(repositories, programId, sale);
  await reviewTier(repositories, programId, sale.affiliateId);
}

/** sale.deleted names only the sale: its affiliate is the one its counted entry names. */
export async function uncountSaleAndReviewTier(repositories: Repositories, programId: string, saleId: string): Promise<void> {
  const counted = await repositories.linkActivity.sale(programId, saleId);
  await uncount(repositories, programId, 'sale', saleId);
  if (counted?.affiliateId) await reviewTier(repositories, programId, counted.affiliateId);
}
