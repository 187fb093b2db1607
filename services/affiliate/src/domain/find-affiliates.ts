import type { Affiliate } from '@affiliate/contracts';
import { findPage, type PageRequest } from '@affiliate/platform';
import { emailKeyOf, toAffiliate, type AffiliateDocument } from '../data-access/affiliates';
import { linkKeyOf } from '../data-access/links';
import type { Models } from '../data-access/models';
import { linksOfAffiliate, linksOfAffiliates } from './affiliate-links';
import { affiliateIdOfClick } from './record-click';

const ALL_DIGITS = /^\d+$/;
const MAX_CLICK_ID = Number.MAX_SAFE_INTEGER;

export async function affiliateById(models: Models, programId: string, affiliateId: string): Promise<AffiliateDocument | null> {
  return models.affiliates.findOne({ _id: affiliateId, programId }).lean();
}

export async function affiliateByEmail(models: Models, programId: string, email: string): Promise<AffiliateDocument | null> {
  return models.affiliates.findOne({ emailKey: emailKeyOf(programId, email), programId }).lean();
}

export async function affiliateBySlug(models: Models, programId: string, slug: string): Promise<AffiliateDocument | null> {
  const link = await models.links.findOne({ linkKey: linkKeyOf(programId, slug), programId }).lean();
  return link ? affiliateById(models, programId, link.affiliateId) : null;
}

/**
 * `id` is, in this order (spec): a click id when entirely numeric, an affiliate id, or one of the
 * affiliate's slugs.
 */
export async function affiliateByIdentifier(models: Models, programId: string, identifier: string): Promise<AffiliateDocument | null> {
  if (ALL_DIGITS.test(identifier) && Number(identifier) <= MAX_CLICK_ID) {
    const affiliateId = await affiliateIdOfClick(models, programId, Number(identifier));
    const clicked = affiliateId ? await affiliateById(models, programId, affiliateId) : null;
    if (clicked) return clicked;
  }
  return (await affiliateById(models, programId, identifier)) ?? (await affiliateBySlug(models, programId, identifier));
}

export async function withLinks(models: Models, affiliate: AffiliateDocument): Promise<Affiliate> {
  return toAffiliate(affiliate, await linksOfAffiliate(models, affiliate.programId, affiliate._id));
}

/** One affiliate by id and/or email (both must match when both are given), or null. */
export async function lookUpAffiliate(models: Models, programId: string, query: { id?: string; email?: string }): Promise<Affiliate | null> {
  const affiliate =
    query.id !== undefined ? await affiliateByIdentifier(models, programId, query.id) : await affiliateByEmail(models, programId, query.email ?? '');
  if (!affiliate) return null;
  if (query.email !== undefined && affiliate.emailKey !== emailKeyOf(programId, query.email)) return null;
  return withLinks(models, affiliate);
}

export async function listAffiliates(models: Models, programId: string, page: PageRequest): Promise<{ items: Affiliate[]; nextCursor: string | null }> {
  const { items, nextCursor } = await findPage(models.affiliates, { programId }, page);
  const links = await linksOfAffiliates(models, programId, items.map((affiliate) => affiliate._id));
  return { items: items.map((affiliate) => toAffiliate(affiliate, links.get(affiliate._id) ?? [])), nextCursor };
}
