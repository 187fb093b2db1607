import { randomUUID } from 'node:crypto';
import { riskSettingsOf, type CreateReferralBody, type ExplainedAttribution, type Referral, type Risk } from '@affiliate/contracts';
import { assessRisk, badRequest, customerKeysOf, UniqueKeyConflict, type ServiceClient } from '@affiliate/platform';
import { resolveAttribution } from '../data-access/affiliate-attribution';
import type { ReferralRepositories } from '../data-access/repositories';
import { emailKeyOf, toReferral, type ReferralDocument } from '../data-access/referrals';
import { DUPLICATE_EMAIL_MESSAGE, referralCreated } from './referral-events';

/**
 * A tracked visitor becomes an identified customer: attribute them to an affiliate (through the
 * click, the visitor's clicks, the slug or the affiliate named), keeping why, then store the referral with referral.created in one write.
 */
export async function createReferral(
  repositories: ReferralRepositories,
  affiliates: ServiceClient,
  programId: string,
  input: CreateReferralBody,
): Promise<Referral> {
  // The attribution first: a caller holding only a publishable key must not learn whether a
  // customer email is known by sending it with a made-up click or visitor.
  const attribution = await resolveAttribution(affiliates, programId, input);
  if (await repositories.referrals.byEmail(programId, input.email)) throw badRequest(DUPLICATE_EMAIL_MESSAGE, 'email_taken', 'email');
  const customerKeys = customerKeysOf({ email: input.email, customerId: input.referredUserExternalId });
  const risk = await riskOf(repositories, programId, attribution, input, customerKeys);
  const now = new Date();
  const referral: ReferralDocument = {
    _id: randomUUID(),
    programId,
    affiliateId: attribution.affiliateId,
    linkId: attribution.linkId,
    clickId: attribution.clickId,
    email: input.email,
    emailKey: emailKeyOf(programId, input.email),
    name: input.name ?? null,
    referredUserExternalId: input.referredUserExternalId ?? null,
    plan: input.plan ?? null,
    status: input.status,
    attribution: attribution.reason,
    risk,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await repositories.referrals.insert(referral, (stored) => [referralCreated(stored)]);
  } catch (error) {
    // Two requests for the same email at once: the unique key lets exactly one in.
    if (error instanceof UniqueKeyConflict) throw badRequest(DUPLICATE_EMAIL_MESSAGE, 'email_taken', 'email');
    throw error;
  }
  await repositories.customerClaims.claim(programId, referral.affiliateId, customerKeys, `referral ${referral._id}`);
  return toReferral(referral);
}

/** The referral's risk signals (README, "Fraud review"), from what the affiliate service answered with the attribution. */
async function riskOf(
  repositories: ReferralRepositories,
  programId: string,
  attribution: ExplainedAttribution,
  input: CreateReferralBody,
  customerKeys: string[],
): Promise<Risk> {
  const other = await repositories.customerClaims.claimedByAnother(programId, attribution.affiliateId, customerKeys);
  return assessRisk(attribution.risk?.settings ?? riskSettingsOf({}), {
    customerEmail: input.email,
    affiliateEmail: attribution.risk?.affiliateEmail,
    otherAffiliate: other && `this customer (${other.customerKey}) is already the ${other.source} of affiliate ${other.affiliateId}`,
    clickAgeSeconds: attribution.reason.ageSeconds,
    visitorAffiliatesWithinHour: attribution.risk?.visitorAffiliatesWithinHour,
  });
}
