import type { Affiliate } from '@affiliate/contracts';
import { csvText, type CsvRow, type PageRequest } from '@affiliate/platform';
import { emailKeyOf, toAffiliate, type AffiliateDocument, type AffiliateFilters } from '../data-access/affiliates';
import type { Repositories } from '../data-access/repositories';
import { linksOfAffiliate, linksOfAffiliates } from './affiliate-links';
import { planSummariesOf, planSummaryOf } from './commission-plans';
import { affiliateIdOfClick } from './record-click';

const ALL_DIGITS = /^\d+$/;
const MAX_CLICK_ID = Number.MAX_SAFE_INTEGER;

export async function affiliateById(repositories: Repositories, programId: string, affiliateId: string): Promise<AffiliateDocument | null> {
  return repositories.affiliates.byId(programId, affiliateId);
}

export async function affiliateByEmail(repositories: Repositories, programId: string, email: string): Promise<AffiliateDocument | null> {
  return repositories.affiliates.byEmail(programId, email);
}

export async function affiliateBySlug(repositories: Repositories, programId: string, slug: string): Promise<AffiliateDocument | null> {
  const link = await repositories.links.bySlug(programId, slug);
  return link ? affiliateById(repositories, programId, link.affiliateId) : null;
}

/**
 * `id` is, in this order (spec): a click id when entirely numeric, an affiliate id, or one of the
 * affiliate's slugs.
 */
export async function affiliateByIdentifier(
  repositories: Repositories,
  programId: string,
  identifier: string,
): Promise<AffiliateDocument | null> {
  if (ALL_DIGITS.test(identifier) && Number(identifier) <= MAX_CLICK_ID) {
    const affiliateId = await affiliateIdOfClick(repositories, programId, Number(identifier));
    const clicked = affiliateId ? await affiliateById(repositories, programId, affiliateId) : null;
    if (clicked) return clicked;
  }
  return (await affiliateById(repositories, programId, identifier)) ?? (await affiliateBySlug(repositories, programId, identifier));
}

export async function withLinks(repositories: Repositories, affiliate: AffiliateDocument): Promise<Affiliate> {
  const [links, plan] = await Promise.all([
    linksOfAffiliate(repositories, affiliate.programId, affiliate._id),
    planSummaryOf(repositories, affiliate),
  ]);
  return toAffiliate(affiliate, links, plan);
}

/** One affiliate by id and/or email (both must match when both are given), or null. */
export async function lookUpAffiliate(
  repositories: Repositories,
  programId: string,
  query: { id?: string; email?: string },
): Promise<Affiliate | null> {
  const affiliate =
    query.id !== undefined
      ? await affiliateByIdentifier(repositories, programId, query.id)
      : await affiliateByEmail(repositories, programId, query.email ?? '');
  if (!affiliate) return null;
  if (query.email !== undefined && affiliate.emailKey !== emailKeyOf(programId, query.email)) return null;
  return withLinks(repositories, affiliate);
}

export async function listAffiliates(
  repositories: Repositories,
  programId: string,
  filters: AffiliateFilters,
  page: PageRequest,
): Promise<{ items: Affiliate[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.affiliates.list(programId, filters, page);
  const [links, plans] = await Promise.all([
    linksOfAffiliates(
      repositories,
      programId,
      items.map((affiliate) => affiliate._id),
    ),
    planSummariesOf(repositories, programId, items),
  ]);
  return {
    items: items.map((affiliate) => toAffiliate(affiliate, links.get(affiliate._id) ?? [], plans.get(affiliate._id) ?? null)),
    nextCursor,
  };
}

/** The filtered affiliates as CSV rows, newest first, names and emails guarded against formulas. */
export async function* affiliateCsvRows(repositories: Repositories, programId: string, filters: AffiliateFilters): AsyncGenerator<CsvRow> {
  for await (const affiliate of repositories.affiliates.exportRows(programId, filters)) {
    yield [
      affiliate._id,
      csvText(affiliate.firstName),
      csvText(affiliate.lastName),
      csvText(affiliate.email),
      affiliate.status,
      affiliate.commissionRate,
      affiliate.createdAt.toISOString(),
    ];
  }
}
