import { fromMinorUnits, isDuplicateKey, toMinorUnits } from '@affiliate/platform';
import type { ActivityKind } from '../data-access/link-activity';
import type { Models } from '../data-access/models';
import { firstLinkOf } from './affiliate-links';

export type LinkStats = { clicks: number; referrals: number; sales: number; totalRevenue: number };

export type AttributedObject = { id: string; affiliateId: string; linkId?: string | null; updatedAt?: string };

/**
 * totalRevenue has no currency in the specification: a plain sum to two decimals, kept as an integer
 * count of hundredths and rounded by the one money rule (platform money module).
 */
const REVENUE_UNIT = 'USD';
const toCents = (amount: number) => toMinorUnits(amount, REVENUE_UNIT);

/** The link a referral or sale counts on: its own, else the affiliate's first; null when the affiliate has none left. */
async function countedLinkOf(models: Models, programId: string, object: AttributedObject): Promise<string | null> {
  if (object.linkId) return object.linkId;
  return (await firstLinkOf(models, programId, object.affiliateId))?._id ?? null;
}

/** referral.created: counted once however often it arrives; a referral already deleted stays uncounted. */
export async function countReferral(models: Models, programId: string, referral: AttributedObject): Promise<void> {
  const linkId = await countedLinkOf(models, programId, referral);
  if (!linkId) return;
  const now = new Date();
  await ignoringDuplicate(
    models.linkActivity.updateOne(
      { programId, kind: 'referral', sourceId: referral.id },
      {
        $setOnInsert: {
          linkId,
          affiliateId: referral.affiliateId,
          amountCents: 0,
          removed: false,
          sourceUpdatedAt: referral.updatedAt ? new Date(referral.updatedAt) : now,
          createdAt: now,
        },
      },
      { upsert: true },
    ),
  );
}

/**
 * sale.created and sale.updated: the sale's current amount. The filter only matches a live entry
 * no newer than this event, so a repeated or older event and a deleted sale change nothing (their
 * upsert collides with the existing entry and is dropped).
 */
export async function countSale(models: Models, programId: string, sale: AttributedObject & { totalEarned: number }): Promise<void> {
  const linkId = await countedLinkOf(models, programId, sale);
  if (!linkId) return;
  const now = new Date();
  const updatedAt = sale.updatedAt ? new Date(sale.updatedAt) : now;
  await ignoringDuplicate(
    models.linkActivity.updateOne(
      { programId, kind: 'sale', sourceId: sale.id, removed: false, sourceUpdatedAt: { $lte: updatedAt } },
      {
        $set: { amountCents: toCents(sale.totalEarned), sourceUpdatedAt: updatedAt },
        $setOnInsert: { linkId, affiliateId: sale.affiliateId, createdAt: now },
      },
      { upsert: true },
    ),
  );
}

/** referral.deleted / sale.deleted carry only the id: the entry stays as a removed marker, subtracted once. */
export async function uncount(models: Models, programId: string, kind: Exclude<ActivityKind, 'click'>, sourceId: string): Promise<void> {
  const now = new Date();
  await ignoringDuplicate(
    models.linkActivity.updateOne(
      { programId, kind, sourceId },
      { $set: { removed: true, amountCents: 0 }, $setOnInsert: { linkId: '', affiliateId: '', sourceUpdatedAt: now, createdAt: now } },
      { upsert: true },
    ),
  );
}

async function ignoringDuplicate(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
  }
}

type StatsRow = { _id: { linkId: string; kind: ActivityKind }; count: number; cents: number };

export async function statsOfLinks(models: Models, programId: string, linkIds: string[]): Promise<Map<string, LinkStats>> {
  const stats = new Map<string, LinkStats>(linkIds.map((id) => [id, { clicks: 0, referrals: 0, sales: 0, totalRevenue: 0 }]));
  if (linkIds.length === 0) return stats;
  const rows = await models.linkActivity.aggregate<StatsRow>([
    { $match: { programId, linkId: { $in: linkIds }, removed: false } },
    { $group: { _id: { linkId: '$linkId', kind: '$kind' }, count: { $sum: 1 }, cents: { $sum: '$amountCents' } } },
  ]);
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
