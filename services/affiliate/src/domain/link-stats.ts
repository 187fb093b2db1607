import { fromMinorUnits, toMinorUnits } from '@affiliate/platform';
import type { ActivityKind } from '../data-access/link-activity';
import type { Repositories } from '../data-access/repositories';
import { firstLinkOf } from './affiliate-links';

export type LinkStats = { clicks: number; referrals: number; sales: number; totalRevenue: number };

export type AttributedObject = { id: string; affiliateId: string; linkId?: string | null; updatedAt?: string };

/**
 * totalRevenue has no currency in the specification: a plain sum to two decimals, kept as an integer
 * count of hundredths and rounded by the one money rule (platform money module).
 */
export const REVENUE_UNIT = 'USD';
const toCents = (amount: number) => toMinorUnits(amount, REVENUE_UNIT);

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
export async function countSale(repositories: Repositories, programId: string, sale: AttributedObject & { totalEarned: number }): Promise<void> {
  const linkId = await countedLinkOf(repositories, programId, sale);
  if (!linkId) return;
  const now = new Date();
  const updatedAt = sale.updatedAt ? new Date(sale.updatedAt) : now;
  await repositories.linkActivity.setAmount(programId, sale.id, toCents(sale.totalEarned), updatedAt, { linkId, affiliateId: sale.affiliateId, createdAt: now });
}

/** referral.deleted / sale.deleted carry only the id: the entry stays as a removed marker, subtracted once. */
export async function uncount(repositories: Repositories, programId: string, kind: Exclude<ActivityKind, 'click'>, sourceId: string): Promise<void> {
  await repositories.linkActivity.markRemoved(programId, kind, sourceId);
}

export async function statsOfLinks(repositories: Repositories, programId: string, linkIds: string[]): Promise<Map<string, LinkStats>> {
  const stats = new Map<string, LinkStats>(linkIds.map((id) => [id, { clicks: 0, referrals: 0, sales: 0, totalRevenue: 0 }]));
  if (linkIds.length === 0) return stats;
  const rows = await repositories.linkActivity.totals(programId, linkIds);
  for (const row of rows) {
    const entry = stats.get(row._id.linkId);
    if (!entry) continue;
    if (row._id.kind === 'click') entry.clicks = row.count;
    if (row._id.kind === 'referral') entry.referrals = row.count;
    if (row._id.kind === 'sale') {
      entry.sales = row.count;
      entry.totalRevenue = fromMinorUnits(row.cents, REVENUE_UNIT);
    }
  }
  return stats;
}
