import type { AffiliateActivity, ExplainedAttribution, InternalAffiliate } from '@affiliate/contracts';
import { badRequest, notFound } from '@affiliate/platform';
import type { AffiliateDocument } from '../data-access/affiliates';
import type { Repositories } from '../data-access/repositories';
import { planInForce } from './commission-plans';
import { affiliateByEmail, affiliateById } from './find-affiliates';
import type { ProgramSettings } from '../data-access/programs';
import type { VisitorClick } from '../data-access/visitors';
import { programSettingsOf } from './program-settings';
import { clickById, liveLinkBySlug } from './record-click';

export type AttributionQuery = { clickId?: number; visitorId?: string; link?: string; affiliateId?: string; affiliateEmail?: string };

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
  const [affiliates, counts, settings] = await Promise.all([
    repositories.affiliates.everyone(programId),
    repositories.linkActivity.countsByAffiliate(programId, period.from, period.to),
    programSettingsOf(repositories, programId),
  ]);
  const countOf = (affiliateId: string, kind: string) => counts.find((row) => row._id.affiliateId === affiliateId && row._id.kind === kind)?.count ?? 0;
  return affiliates.map((affiliate) => ({
    affiliateId: affiliate._id,
    name: `${affiliate.firstName} ${affiliate.lastName}`,
    email: affiliate.email,
    clicks: countOf(affiliate._id, 'click'),
    referrals: countOf(affiliate._id, 'referral'),
    reportingCurrency: settings.reportingCurrency,
  }));
}

/**
 * Who a referral belongs to, and why: through a click (its link), the clicks of a visitor (the
 * program's attribution model picks one), a slug, or the affiliate directly (then no link: the
 * statistics count it on the affiliate's first link). Clicks older than the program's attribution
 * window no longer attribute.
 */
export async function resolveAttribution(repositories: Repositories, programId: string, query: AttributionQuery): Promise<ExplainedAttribution> {
  const now = new Date();
  if (query.clickId !== undefined) {
    const click = await clickById(repositories, programId, query.clickId);
    const affiliate = click ? await affiliateById(repositories, programId, click.affiliateId) : null;
    if (!click || !affiliate) throw notFound(`No click ${query.clickId} in this program`);
    const settings = await programSettingsOf(repositories, programId);
    if (click.createdAt < windowStart(settings, now)) {
      throw badRequest(`click ${query.clickId} is older than the program's attribution window of ${settings.attributionWindowDays} days`);
    }
    const link = await repositories.links.byId(programId, click.linkId);
    return byClick('CLICK', { clickId: query.clickId, linkId: click.linkId, affiliateId: affiliate._id, at: click.createdAt }, link?.link ?? null, now);
  }
  if (query.visitorId !== undefined) return byVisitor(repositories, programId, query.visitorId, now);
  if (query.link !== undefined) {
    const link = await liveLinkBySlug(repositories, programId, query.link);
    if (!link) throw notFound(`No referral link "${query.link}" in this program`);
    return { affiliateId: link.affiliateId, linkId: link._id, link: link.link, clickId: null, reason: withoutClick('LINK', link.affiliateId) };
  }
  const { _id: id } = await existingAffiliate(repositories, programId, { id: query.affiliateId, email: query.affiliateEmail });
  return { affiliateId: id, linkId: null, link: null, clickId: null, reason: withoutClick('AFFILIATE', id) };
}

/** FIRST_CLICK: the visitor's earliest click within the window; LAST_CLICK: the latest. Clicks of removed affiliates are passed over. */
async function byVisitor(repositories: Repositories, programId: string, visitorId: string, now: Date): Promise<ExplainedAttribution> {
  const [settings, clicks] = await Promise.all([programSettingsOf(repositories, programId), repositories.visitors.clicksOf(programId, visitorId)]);
  const start = windowStart(settings, now);
  const candidates = clicks.filter((click) => click.at >= start);
  if (settings.attributionModel === 'LAST_CLICK') candidates.reverse();
  for (const click of candidates) {
    if (!(await affiliateById(repositories, programId, click.affiliateId))) continue;
    const link = await repositories.links.byId(programId, click.linkId);
    return byClick('VISITOR', click, link?.link ?? null, now);
  }
  const within = settings.attributionWindowDays === null ? '' : ` within the program's attribution window of ${settings.attributionWindowDays} days`;
  throw notFound(`No click of visitor ${visitorId} in this program${within}`);
}

function byClick(method: 'CLICK' | 'VISITOR', click: VisitorClick, link: string | null, now: Date): ExplainedAttribution {
  return {
    affiliateId: click.affiliateId,
    linkId: click.linkId,
    link,
    clickId: click.clickId,
    reason: {
      method,
      clickId: click.clickId,
      clickedAt: click.at.toISOString(),
      ageSeconds: Math.max(0, Math.floor((now.getTime() - click.at.getTime()) / 1000)),
      affiliateId: click.affiliateId,
    },
  };
}

const withoutClick = (method: 'LINK' | 'AFFILIATE', affiliateId: string) => ({ method, clickId: null, clickedAt: null, ageSeconds: null, affiliateId });

/** Clicks before this no longer attribute; without a window, none expire. */
function windowStart(settings: ProgramSettings, now: Date): Date {
  return settings.attributionWindowDays === null ? new Date(0) : new Date(now.getTime() - settings.attributionWindowDays * 86_400_000);
}
