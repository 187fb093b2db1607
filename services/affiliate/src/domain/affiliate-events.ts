import type { Affiliate, AffiliateLink, EventEnvelope } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { toAffiliate, type AffiliateDocument, type PlanSummary } from '../data-access/affiliates';
import type { Repositories } from '../data-access/repositories';
import { planSummaryOf } from './commission-plans';

/**
 * affiliate.created carries the expansions of payload rule 1. Promotional codes belong to the
 * coupon service and a brand-new affiliate cannot have any yet, so the list is empty.
 */
export function affiliateCreated(affiliate: AffiliateDocument, links: AffiliateLink[], plan: PlanSummary | null): EventEnvelope<Affiliate> {
  return createEvent('affiliate.created', affiliate.programId, { ...toAffiliate(affiliate, links, plan), promotionalCodes: [] });
}

export function affiliateUpdated(affiliate: AffiliateDocument, links: AffiliateLink[], plan: PlanSummary | null): EventEnvelope<Affiliate> {
  return createEvent('affiliate.updated', affiliate.programId, toAffiliate(affiliate, links, plan));
}

/**
 * affiliate.updated for a change of the affiliate's links, which the link's own write carries: with
 * the affiliate's revision taken for it (AggregateStore.takeRevision) and its links before the change.
 * The affiliate and its plan are the ones stamped with that revision, not the ones the caller read
 * earlier: a change that landed in between must not go out again, older, at a higher revision.
 */
export async function affiliateLinksChanged(
  repositories: Repositories,
  affiliate: AffiliateDocument,
  before: AffiliateLink[],
): Promise<(links: AffiliateLink[]) => EventEnvelope<Affiliate>> {
  const stamped = await repositories.affiliates.takeRevision(affiliate.programId, affiliate._id);
  const current = stamped ?? affiliate;
  const plan = await planSummaryOf(repositories, current);
  return (links) => ({
    ...affiliateUpdated(current, links, plan),
    ...(stamped ? { revision: stamped.revision } : {}),
    previousAttributes: { affiliateLinks: before },
  });
}

export function affiliateDeleted(affiliate: AffiliateDocument): EventEnvelope<{ id: string }> {
  return createEvent('affiliate.deleted', affiliate.programId, { id: affiliate._id });
}
