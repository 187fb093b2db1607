import type { AttributionReason, CreateSaleBody, ExplainedAttribution, InternalAffiliate, Referral } from '@affiliate/contracts';
import { badRequest } from '@affiliate/platform';
import { findAffiliate } from '../data-access/affiliate-directory';
import { resolveVisit } from '../data-access/attribution-directory';
import { findReferralByEmail, findReferralById } from '../data-access/referral-directory';
import type { SaleDependencies } from './sale-dependencies';

/** The affiliate a sale is credited to, as it stands now; only ACTIVE affiliates earn commission. */
export async function activeAffiliate(deps: SaleDependencies, programId: string, affiliateId: string): Promise<InternalAffiliate> {
  // With the program's risk settings: the sale's risk signals are judged by them. Recent reads of the
  // affiliate service (up to 2 s behind a change made on another of its replicas): every sale asks.
  const affiliate = await findAffiliate(deps.affiliates, programId, affiliateId, { withRiskSettings: true, forSale: true });
  if (!affiliate) throw badRequest(`The affiliate ${affiliateId} of this sale no longer exists in this program`, 'affiliate_not_active');
  if (affiliate.status !== 'ACTIVE') {
    throw badRequest(`Affiliate ${affiliateId} is ${affiliate.status}: only ACTIVE affiliates can earn a sale`, 'affiliate_not_active');
  }
  return affiliate;
}

/** The referral a sale without a promo code is attributed through: by its id, else by its email. */
export async function attributedReferral(
  deps: SaleDependencies,
  programId: string,
  input: { referralId?: string; email?: string },
): Promise<Referral> {
  if (input.referralId !== undefined) {
    const referral = await findReferralById(deps.referrals, programId, input.referralId);
    if (!referral)
      throw badRequest(`referralId: no referral with id ${input.referralId} in this program`, 'resource_missing', 'referralId');
    if (input.email !== undefined && referral.email.toLowerCase() !== input.email.toLowerCase()) {
      throw badRequest(
        `email: referral ${input.referralId} has another email; send one of them, or both of the same referral`,
        'parameters_inconsistent',
        'email',
      );
    }
    return referral;
  }
  const email = input.email ?? '';
  const referral = await findReferralByEmail(deps.referrals, programId, email);
  if (!referral) throw badRequest(`email: no referral with email ${email} in this program`, 'resource_missing', 'email');
  return referral;
}

/**
 * Why a sale through a referral is the affiliate's: REFERRAL when the referral was named, EMAIL when
 * found by the customer's email; either carries the referral's click, aged to the payment.
 */
function attributionThroughReferral(method: 'REFERRAL' | 'EMAIL', referral: Referral, paidAt: Date): AttributionReason {
  const clickedAt = referral.attribution?.clickedAt ?? null;
  return {
    method,
    clickId: referral.attribution?.clickId ?? referral.clickId,
    clickedAt,
    ageSeconds: ageAt(clickedAt, paidAt),
    affiliateId: referral.affiliateId,
  };
}

const ageAt = (clickedAt: string | null, at: Date): number | null =>
  clickedAt === null ? null : Math.max(0, Math.floor((at.getTime() - Date.parse(clickedAt)) / 1000));

/**
 * Who a sale that names no promo code is credited to, and why. `customer` is whom the recurring
 * rules count payments of: the referral, else the customerId sent, else nobody (a first payment).
 */
export type SaleCredit = {
  affiliateId: string;
  referral: Referral | null;
  linkId: string | null;
  attribution: AttributionReason;
  customer: string | null;
  /** COOKIE_STUFFING: the affiliates whose links the visitor behind the click clicked within an hour (click and visitor sales). */
  visitorAffiliatesWithinHour?: number | null;
};

/**
 * What an integration already knows about the sale's customer (a Stripe customer linked at
 * checkout): its referral and how it was found, or the click it came through.
 */
export type PinnedCredit = { referralId: string; method: 'REFERRAL' | 'EMAIL' } | { visit: ExplainedAttribution };

export async function creditOf(
  deps: SaleDependencies,
  programId: string,
  input: CreateSaleBody,
  paidAt: Date,
  pinned?: PinnedCredit,
): Promise<SaleCredit> {
  const customerOfInput = input.customerId === undefined ? null : `customer:${input.customerId}`;
  if (pinned && 'visit' in pinned) return creditOfVisit(pinned.visit, paidAt, customerOfInput);
  if (pinned) {
    const referral = await findReferralById(deps.referrals, programId, pinned.referralId);
    if (!referral)
      throw badRequest(`referral ${pinned.referralId} of this customer no longer exists in this program`, 'attribution_failed');
    return creditOfReferral(referral, pinned.method, paidAt);
  }
  if (input.clickId !== undefined || input.visitorId !== undefined) {
    const [field, visit] =
      input.clickId !== undefined
        ? (['clickId', { clickId: input.clickId }] as const)
        : (['visitorId', { visitorId: input.visitorId ?? '' }] as const);
    const resolved = await resolveVisit(deps.affiliates, programId, visit);
    if ('refused' in resolved) throw badRequest(`${field}: ${resolved.refused}`, 'attribution_failed', field);
    return creditOfVisit(resolved, paidAt, customerOfInput);
  }
  const referral = await attributedReferral(deps, programId, input);
  return creditOfReferral(referral, input.referralId !== undefined ? 'REFERRAL' : 'EMAIL', paidAt);
}

function creditOfReferral(referral: Referral, method: 'REFERRAL' | 'EMAIL', paidAt: Date): SaleCredit {
  return {
    affiliateId: referral.affiliateId,
    referral,
    linkId: referral.linkId,
    attribution: attributionThroughReferral(method, referral, paidAt),
    customer: `referral:${referral.id}`,
  };
}

/** A sale through a click is aged from the click to the payment, as one through a referral is. */
function creditOfVisit(visit: ExplainedAttribution, paidAt: Date, customer: string | null): SaleCredit {
  return {
    affiliateId: visit.affiliateId,
    referral: null,
    linkId: visit.linkId,
    attribution: { ...visit.reason, ageSeconds: ageAt(visit.reason.clickedAt, paidAt) },
    customer,
    visitorAffiliatesWithinHour: visit.risk?.visitorAffiliatesWithinHour ?? null,
  };
}

/** A promo-code sale is the affiliate's who holds the code. */
export const attributionByPromoCode = (affiliateId: string): AttributionReason => ({
  method: 'PROMO_CODE',
  clickId: null,
  clickedAt: null,
  ageSeconds: null,
  affiliateId,
});
