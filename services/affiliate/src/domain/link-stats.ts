import { fromMinorUnits, toMinorUnits } from '@affiliate/platform';
import { LEGACY_REVENUE_CURRENCY, type ActivityKind } from '../data-access/link-activity';
import type { Repositories } from '../data-access/repositories';
import { firstLinkOf } from './affiliate-links';

/**
 * A link's numbers. `sales` counts sales in every currency; `totalRevenue` (the specification's one
 * number, which has no currency) sums the program's reporting currency only, and the ByCurrency
 * objects have every currency apart: no figure adds two currencies together.
 */
export type LinkStats = {
  clicks: number;
  referrals: number;
  sales: number;
  totalRevenue: number;
  salesByCurrency: Record<string, number>;
  revenueByCurrency: Record<string, number>;
};

export type AttributedObject = { id: string; affiliateId: string; linkId?: string | null; updatedAt?: string };

const noStats = (): LinkStats => ({ clicks: 0, referrals: 0, sales: 0, totalRevenue: 0, salesByCurrency: {}, revenueByCurrency: {} });

/** The link a referral or sale counts on: its own, else the affiliate's first; null when the affiliate has none left. */
async function countedLinkOf(repositories: Repositories, programId: string, object: AttributedObject): Promise<string | null> {
  if (object.linkId) return object.linkId;
  return (await firstLinkOf(repositories, programId, object.affiliateId))?._id ?? null;
}

/** referral.created: counted once however often it arrives; a referral already deleted stays uncounted. */
export async function countReferral(repositories: Repositories, programId: string, referral: AttributedObject): Promise<void> {
  const linkId = await countedLinkOf(repositories, programId, referral);
  if (!linkId) return;
  const now = new Date();
  await repositories.linkActivity.countOnce(programId, 'referral', referral.id, {
    linkId,
    affiliateId: referral.affiliateId,
    amountCents: 0,
    removed: false,
    sourceUpdatedAt: referral.updatedAt ? new Date(referral.updatedAt) : now,
    createdAt: now,
  });
}

/** sale.created and sale.updated: the sale's current amount; a repeated or older event and a deleted sale change nothing. */
export async function countSale(
  repositories: Repositories,
  programId: string,
  sale: AttributedObject & { totalEarned: number; currency?: string },
): Promise<void> {
  const linkId = await countedLinkOf(repositories, programId, sale);
  if (!linkId) return;
  const now = new Date();
  const updatedAt = sale.updatedAt ? new Date(sale.updatedAt) : now;
  // A sale event from before currencies were carried (left in a queue) counts as the legacy unit.
  const currency = sale.currency?.toUpperCase() ?? LEGACY_REVENUE_CURRENCY;
  const amount = { amountCents: toMinorUnits(sale.totalEarned, currency), currency };
  await repositories.linkActivity.setAmount(programId, sale.id, amount, updatedAt, {
    linkId,
    affiliateId: sale.affiliateId,
    createdAt: now,
  });
}

/** referral.deleted / sale.deleted carry only the id: the entry stays as a removed marker, subtracted once. */
export async function uncount(
  repositories: Repositories,
  programId: string,
  kind: Exclude<ActivityKind, 'click'>,
  sourceId: string,
): Promise<void> {
  await repositories.linkActivity.markRemoved(programId, kind, sourceId);
}

export async function statsOfLinks(
  repositories: Repositories,
  programId: string,
  linkIds: string[],
  reportingCurrency: string,
): Promise<Map<string, LinkStats>> {
  const stats = new Map<string, LinkStats>(linkIds.map((id) => [id, noStats()]));
  if (linkIds.length === 0) return stats;
  const rows = await repositories.linkActivity.totals(programId, linkIds);
  for (const row of rows) {
    const entry = stats.get(row._id.linkId);
    if (!entry) continue;
    if (row._id.kind === 'click') entry.clicks = row.count;
    if (row._id.kind === 'referral') entry.referrals = row.count;
    if (row._id.kind === 'sale') {
      const currency = row._id.currency ?? LEGACY_REVENUE_CURRENCY;
      entry.sales += row.count;
      entry.salesByCurrency[currency] = (entry.salesByCurrency[currency] ?? 0) + row.count;
      const revenue = fromMinorUnits(toMinorUnits(entry.revenueByCurrency[currency] ?? 0, currency) + row.cents, currency);
      entry.revenueByCurrency[currency] = revenue;
      if (currency === reportingCurrency) entry.totalRevenue = revenue;
    }
  }
  return stats;
}
