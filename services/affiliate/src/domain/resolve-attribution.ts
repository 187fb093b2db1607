import type { AffiliateActivity, Attribution, InternalAffiliate } from '@affiliate/contracts';
import { notFound } from '@affiliate/platform';
import type { AffiliateDocument } from '../data-access/affiliates';
import type { Repositories } from '../data-access/repositories';
import { planInForce } from './commission-plans';
import { affiliateByEmail, affiliateById } from './find-affiliates';
import { clickById, liveLinkBySlug } from './record-click';

export type AttributionQuery = { clickId?: number; link?: string; affiliateId?: string; affiliateEmail?: string };

async function toInternalAffiliate(repositories: Repositories, affiliate: AffiliateDocument): Promise<InternalAffiliate> {
  return {
    id: affiliate._id,
    firstName: affiliate.firstName,
    lastName: affiliate.lastName,
    email: affiliate.email,
    status: affiliate.status,
    commissionRate: affiliate.commissionRate,
    plan: await planInForce(repositories, affiliate),
    payoutDetails: affiliate.payoutDetails ?? null,
  };
}

/** For the other services: an affiliate by id or email, 404 when the program has none. */
export async function resolveAffiliate(repositories: Repositories, programId: string, query: { id?: string; email?: string }): Promise<InternalAffiliate> {
  return toInternalAffiliate(repositories, await existingAffiliate(repositories, programId, query));
}

async function existingAffiliate(repositories: Repositories, programId: string, query: { id?: string; email?: string }): Promise<AffiliateDocument> {
  const affiliate =
    query.id !== undefined ? await affiliateById(repositories, programId, query.id) : await affiliateByEmail(repositories, programId, query.email ?? '');
  if (!affiliate) throw notFound(query.id !== undefined ? `No affiliate with id ${query.id} in this program` : `No affiliate with email ${query.email} in this program`);
  return affiliate;
}

/** For the sale service's report: each affiliate of the program with its clicks and referrals in [from, to). */
export async function affiliateActivity(repositories: Repositories, programId: string, period: { from?: Date; to?: Date }): Promise<AffiliateActivity[]> {
  const [affiliates, counts] = await Promise.all([repositories.affiliates.everyone(programId), repositories.linkActivity.countsByAffiliate(programId, period.from, period.to)]);
  const countOf = (affiliateId: string, kind: string) => counts.find((row) => row._id.affiliateId === affiliateId && row._id.kind === kind)?.count ?? 0;
  return affiliates.map((affiliate) => ({
    affiliateId: affiliate._id,
    name: `${affiliate.firstName} ${affiliate.lastName}`,
    email: affiliate.email,
    clicks: countOf(affiliate._id, 'click'),
    referrals: countOf(affiliate._id, 'referral'),
  }));
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
  const { _id: id } = await existingAffiliate(repositories, programId, { id: query.affiliateId, email: query.affiliateEmail });
  return { affiliateId: id, linkId: null, link: null, clickId: null };
}
