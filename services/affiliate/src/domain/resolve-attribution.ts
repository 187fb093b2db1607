import type { Attribution, InternalAffiliate } from '@affiliate/contracts';
import { notFound } from '@affiliate/platform';
import type { AffiliateDocument } from '../data-access/affiliates';
import type { Repositories } from '../data-access/repositories';
import { affiliateByEmail, affiliateById } from './find-affiliates';
import { clickById, liveLinkBySlug } from './record-click';

export type AttributionQuery = { clickId?: number; link?: string; affiliateId?: string; affiliateEmail?: string };

function toInternalAffiliate(affiliate: AffiliateDocument): InternalAffiliate {
  return {
    id: affiliate._id,
    firstName: affiliate.firstName,
    lastName: affiliate.lastName,
    email: affiliate.email,
    status: affiliate.status,
    commissionRate: affiliate.commissionRate,
  };
}

/** For the other services: an affiliate by id or email, 404 when the program has none. */
export async function resolveAffiliate(repositories: Repositories, programId: string, query: { id?: string; email?: string }): Promise<InternalAffiliate> {
  const affiliate =
    query.id !== undefined ? await affiliateById(repositories, programId, query.id) : await affiliateByEmail(repositories, programId, query.email ?? '');
  if (!affiliate) throw notFound(query.id !== undefined ? `No affiliate with id ${query.id} in this program` : `No affiliate with email ${query.email} in this program`);
  return toInternalAffiliate(affiliate);
}

/**
 * Who a referral or sale belongs to: through a click (its link), a slug, or the affiliate
 * directly (then no link: the statistics count it on the affiliate's first link).
 */
export async function resolveAttribution(repositories: Repositories, programId: string, query: AttributionQuery): Promise<Attribution> {
  if (query.clickId !== undefined) {
    const click = await clickById(repositories, programId, query.clickId);
    const affiliate = click ? await affiliateById(repositories, programId, click.affiliateId) : null;
    if (!click || !affiliate) throw notFound(`No click ${query.clickId} in this program`);
    const link = await repositories.links.byId(programId, click.linkId);
    return { affiliateId: affiliate._id, linkId: click.linkId, link: link?.link ?? null, clickId: query.clickId };
  }
  if (query.link !== undefined) {
    const link = await liveLinkBySlug(repositories, programId, query.link);
    if (!link) throw notFound(`No referral link "${query.link}" in this program`);
    return { affiliateId: link.affiliateId, linkId: link._id, link: link.link, clickId: null };
  }
  const { id } = await resolveAffiliate(repositories, programId, { id: query.affiliateId, email: query.affiliateEmail });
  return { affiliateId: id, linkId: null, link: null, clickId: null };
}
