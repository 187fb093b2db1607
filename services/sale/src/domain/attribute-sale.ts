import type { AttributionReason, InternalAffiliate, Referral } from '@affiliate/contracts';
import { badRequest } from '@affiliate/platform';
import { findAffiliate } from '../data-access/affiliate-directory';
import { findReferralByEmail, findReferralById } from '../data-access/referral-directory';
import type { SaleDependencies } from './sale-dependencies';

/** The affiliate a sale is credited to, as it stands now; only ACTIVE affiliates earn commission. */
export async function activeAffiliate(deps: SaleDependencies, programId: string, affiliateId: string): Promise<InternalAffiliate> {
  const affiliate = await findAffiliate(deps.affiliates, programId, affiliateId);
  if (!affiliate) throw badRequest(`The affiliate ${affiliateId} of this sale no longer exists in this program`);
  if (affiliate.status !== 'ACTIVE') {
    throw badRequest(`Affiliate ${affiliateId} is ${affiliate.status}: only ACTIVE affiliates can earn a sale`);
  }
  return affiliate;
}

/** The referral a sale without a promo code is attributed through: by its id, else by its email. */
export async function attributedReferral(deps: SaleDependencies, programId: string, input: { referralId?: string; email?: string }): Promise<Referral> {
  if (input.referralId !== undefined) {
    const referral = await findReferralById(deps.referrals, programId, input.referralId);
    if (!referral) throw badRequest(`referralId: no referral with id ${input.referralId} in this program`);
    if (input.email !== undefined && referral.email.toLowerCase() !== input.email.toLowerCase()) {
      throw badRequest(`email: referral ${input.referralId} has another email; send one of them, or both of the same referral`);
    }
    return referral;
  }
  const email = input.email ?? '';
  const referral = await findReferralByEmail(deps.referrals, programId, email);
  if (!referral) throw badRequest(`email: no referral with email ${email} in this program`);
  return referral;
}

/**
 * Why a sale through a referral is the affiliate's: REFERRAL when the referral was named, EMAIL when
 * found by the customer's email; either carries the referral's click, aged to the payment.
 */
export function attributionThroughReferral(input: { referralId?: string }, referral: Referral, paidAt: Date): AttributionReason {
  const clickedAt = referral.attribution?.clickedAt ?? null;
  return {
    method: input.referralId !== undefined ? 'REFERRAL' : 'EMAIL',
    clickId: referral.attribution?.clickId ?? referral.clickId,
    clickedAt,
    ageSeconds: clickedAt === null ? null : Math.max(0, Math.floor((paidAt.getTime() - Date.parse(clickedAt)) / 1000)),
    affiliateId: referral.affiliateId,
  };
}

/** A promo-code sale is the affiliate's who holds the code. */
export const attributionByPromoCode = (affiliateId: string): AttributionReason => ({ method: 'PROMO_CODE', clickId: null, clickedAt: null, ageSeconds: null, affiliateId });
