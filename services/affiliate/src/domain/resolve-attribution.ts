import type { AffiliateActivity, AttributionRisk, DailyActivity, ExplainedAttribution, InternalAffiliate } from '@affiliate/contracts';
import { badRequest, notFound } from '@affiliate/platform';
import type { AffiliateDocument } from '../data-access/affiliates';
import type { Repositories } from '../data-access/repositories';
import { planInForce } from './commission-plans';
import { affiliateByEmail, affiliateById } from './find-affiliates';
import type { ProgramSettings } from '../data-access/programs';
import type { VisitorClick } from '../data-access/visitors';
import { programSettingsOf, recentProgramSettingsOf } from './program-settings';
import { clickById, liveLinkBySlug } from './record-click';
import { mostAffiliatesWithinAnHour } from './cookie-stuffing';

export type AttributionQuery = { clickId?: number; visitorId?: string; link?: string; affiliateId?: string; affiliateEmail?: string };

/**
 * The affiliate as the other services ask for it, with its plan in force (and the program's risk
 * settings when asked). `recently` is the sale service recording a sale (every sale asks): the
 * affiliate, its plan and the settings as this process read them within RECENT_READS_MS, as the
 * clicks do; this process's own changes (status, plan, tier, default plan) are seen at once, another
 * replica's within RECENT_READS_MS. Every other caller (a payout's payee and IBAN, a code assigned
 * to an affiliate, a referral's attribution) reads the database: none of them may act on an
 * affiliate removed or changed a moment ago on another replica.
 */
async function toInternalAffiliate(
  repositories: Repositories,
  affiliate: AffiliateDocument,
  options: { withRisk: boolean; recently: boolean },
): Promise<InternalAffiliate> {
  const settingsOf = options.recently ? recentProgramSettingsOf : programSettingsOf;
  const [plan, settings] = await Promise.all([
    planInForce(repositories, affiliate, { recently: options.recently }),
    options.withRisk ? settingsOf(repositories, affiliate.programId) : undefined,
  ]);
  return {
    id: affiliate._id,
    firstName: affiliate.firstName,
    lastName: affiliate.lastName,
    email: affiliate.email,
    status: affiliate.status,
    commissionRate: affiliate.commissionRate,
    plan,
    payoutDetails: affiliate.payoutDetails ?? null,
    ...(settings ? { riskSettings: settings.risk } : {}),
  };
}

/** For the other services: an affiliate by id or email, 404 when the program has none; `recent`: a sale being recorded (toInternalAffiliate). */
export async function resolveAffiliate(
  repositories: Repositories,
  programId: string,
  query: { id?: string; email?: string; risk?: 'true'; recent?: 'true' },
): Promise<InternalAffiliate> {
  const recently = query.recent === 'true';
  return toInternalAffiliate(repositories, await existingAffiliate(repositories, programId, query, { recently }), {
    withRisk: query.risk === 'true',
    recently,
  });
}

/** By id (with `recently`, as this process read it within RECENT_READS_MS) or by email; 404 when the program has none. */
async function existingAffiliate(
  repositories: Repositories,
  programId: string,
  query: { id?: string; email?: string },
  options: { recently?: boolean } = {},
): Promise<AffiliateDocument> {
  const affiliate =
    query.id !== undefined
      ? await (options.recently
          ? repositories.affiliates.byIdCached(programId, query.id)
          : affiliateById(repositories, programId, query.id))
      : await affiliateByEmail(repositories, programId, query.email ?? '');
  if (!affiliate)
    throw notFound(
      query.id !== undefined
        ? `No affiliate with id ${query.id} in this program`
        : `No affiliate with email ${query.email} in this program`,
    );
  return affiliate;
}

/**
 * For the sale service's report: each affiliate of the program with its clicks and referrals in
 * [from, to). The counts are grouped in the database and joined by affiliate id through a Map; the
 * affiliates are streamed with their names and emails only, never their payout details. Reached only
 * through the sale service's report, which holds the program's heavy-operation place meanwhile.
 */
export async function affiliateActivity(
  repositories: Repositories,
  programId: string,
  period: { from?: Date; to?: Date },
): Promise<AffiliateActivity[]> {
  const settings = await programSettingsOf(repositories, programId);
  const counts = new Map<string, { click: number; referral: number }>();
  for (const row of await repositories.linkActivity.countsByAffiliate(programId, period.from, period.to)) {
    const kinds = counts.get(row._id.affiliateId) ?? { click: 0, referral: 0 };
    if (row._id.kind === 'click' || row._id.kind === 'referral') kinds[row._id.kind] += row.count;
    counts.set(row._id.affiliateId, kinds);
  }
  const rows: AffiliateActivity[] = [];
  for await (const affiliate of repositories.affiliates.reportEntries(programId)) {
    const kinds = counts.get(affiliate._id);
    rows.push({
      affiliateId: affiliate._id,
      name: `${affiliate.firstName} ${affiliate.lastName}`,
      email: affiliate.email,
      clicks: kinds?.click ?? 0,
      referrals: kinds?.referral ?? 0,
      reportingCurrency: settings.reportingCurrency,
    });
  }
  return rows;
}

/**
 * Who a referral belongs to, and why: through a click (its link), the clicks of a visitor (the
 * program's attribution model picks one), a slug, or the affiliate directly (then no link: the
 * statistics count it on the affiliate's first link). Clicks older than the program's attribution
 * window no longer attribute.
 */
export async function resolveAttribution(
  repositories: Repositories,
  programId: string,
  query: AttributionQuery,
): Promise<ExplainedAttribution> {
  const attribution = await attributionOf(repositories, programId, query);
  return { ...attribution, risk: await riskContextOf(repositories, programId, attribution, query.visitorId) };
}

/**
 * What the caller's risk signals need, beside the attribution: the program's risk settings, the
 * affiliate's email, and the affiliates whose links the visitor behind the click (the visitor
 * named, else the one the click was recorded with) clicked within an hour.
 */
async function riskContextOf(
  repositories: Repositories,
  programId: string,
  attribution: ExplainedAttribution,
  visitorId: string | undefined,
): Promise<AttributionRisk> {
  const [settings, affiliate, visitor] = await Promise.all([
    programSettingsOf(repositories, programId),
    affiliateById(repositories, programId, attribution.affiliateId),
    visitorId ??
      (attribution.clickId === null ? null : ((await clickById(repositories, programId, attribution.clickId))?.visitorId ?? null)),
  ]);
  const clicks = visitor === null ? null : await repositories.visitors.clicksOf(programId, visitor);
  return {
    settings: settings.risk,
    affiliateEmail: affiliate?.email ?? '',
    visitorAffiliatesWithinHour: clicks && mostAffiliatesWithinAnHour(clicks),
  };
}

async function attributionOf(repositories: Repositories, programId: string, query: AttributionQuery): Promise<ExplainedAttribution> {
  const now = new Date();
  if (query.clickId !== undefined) {
    const click = await clickById(repositories, programId, query.clickId);
    const affiliate = click ? await affiliateById(repositories, programId, click.affiliateId) : null;
    if (!click || !affiliate) throw notFound(`No click ${query.clickId} in this program`);
    const settings = await programSettingsOf(repositories, programId);
    if (click.createdAt < windowStart(settings, now)) {
      throw badRequest(
        `click ${query.clickId} is older than the program's attribution window of ${settings.attributionWindowDays} days`,
        'attribution_failed',
        'clickId',
      );
    }
    const link = await repositories.links.byId(programId, click.linkId);
    return byClick(
      'CLICK',
      { clickId: query.clickId, linkId: click.linkId, affiliateId: affiliate._id, at: click.createdAt },
      link?.link ?? null,
      now,
    );
  }
  if (query.visitorId !== undefined) return byVisitor(repositories, programId, query.visitorId, now);
  if (query.link !== undefined) {
    const link = await liveLinkBySlug(repositories, programId, query.link);
    if (!link) throw notFound(`No referral link "${query.link}" in this program`);
    return {
      affiliateId: link.affiliateId,
      linkId: link._id,
      link: link.link,
      clickId: null,
      reason: withoutClick('LINK', link.affiliateId),
    };
  }
  const { _id: id } = await existingAffiliate(repositories, programId, { id: query.affiliateId, email: query.affiliateEmail });
  return { affiliateId: id, linkId: null, link: null, clickId: null, reason: withoutClick('AFFILIATE', id) };
}

/** FIRST_CLICK: the visitor's earliest click within the window; LAST_CLICK: the latest. Clicks of removed affiliates are passed over. */
async function byVisitor(repositories: Repositories, programId: string, visitorId: string, now: Date): Promise<ExplainedAttribution> {
  const [settings, clicks] = await Promise.all([
    programSettingsOf(repositories, programId),
    repositories.visitors.clicksOf(programId, visitorId),
  ]);
  const start = windowStart(settings, now);
  const candidates = clicks.filter((click) => click.at >= start);
  if (settings.attributionModel === 'LAST_CLICK') candidates.reverse();
  for (const click of candidates) {
    if (!(await affiliateById(repositories, programId, click.affiliateId))) continue;
    const link = await repositories.links.byId(programId, click.linkId);
    return byClick('VISITOR', click, link?.link ?? null, now);
  }
  const within =
    settings.attributionWindowDays === null ? '' : ` within the program's attribution window of ${settings.attributionWindowDays} days`;
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

const withoutClick = (method: 'LINK' | 'AFFILIATE', affiliateId: string) => ({
  method,
  clickId: null,
  clickedAt: null,
  ageSeconds: null,
  affiliateId,
});

/** Clicks before this no longer attribute; without a window, none expire. */
function windowStart(settings: ProgramSettings, now: Date): Date {
  return settings.attributionWindowDays === null ? new Date(0) : new Date(now.getTime() - settings.attributionWindowDays * 86_400_000);
}

const DAY_MS = 86_400_000;

/**
 * One affiliate's clicks, referrals and sales per UTC day over the last `days` days, oldest first,
 * every day present (zeros included): what its portal charts. 404 when the program has no such affiliate.
 */
export async function dailyActivityOf(
  repositories: Repositories,
  programId: string,
  affiliateId: string,
  days: number,
): Promise<DailyActivity[]> {
  await existingAffiliate(repositories, programId, { id: affiliateId });
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const first = today - (days - 1) * DAY_MS;
  const rows = Array.from({ length: days }, (_unused, index) => ({
    day: new Date(first + index * DAY_MS).toISOString().slice(0, 10),
    clicks: 0,
    referrals: 0,
    sales: 0,
  }));
  for (const { _id, count } of await repositories.linkActivity.activityOfAffiliate(programId, affiliateId, new Date(first))) {
    const row = rows[_id.day];
    if (!row) continue;
    if (_id.kind === 'click') row.clicks += count;
    else if (_id.kind === 'referral') row.referrals += count;
    else row.sales += count;
  }
  return rows;
}
