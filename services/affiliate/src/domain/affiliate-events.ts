import type { Affiliate, AffiliateLink, EventEnvelope } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { toAffiliate, type AffiliateDocument, type PlanSummary } from '../data-access/affiliates';

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

export function affiliateDeleted(affiliate: AffiliateDocument): EventEnvelope<{ id: string }> {
  return createEvent('affiliate.deleted', affiliate.programId, { id: affiliate._id });
}
