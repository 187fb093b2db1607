import { randomUUID } from 'node:crypto';
import { LINK_MESSAGES, type Affiliate, type CreateAffiliateBody, type SignupAffiliateBody } from '@affiliate/contracts';
import { badRequest, UniqueKeyConflict } from '@affiliate/platform';
import { emailKeyOf, toAffiliate, type AffiliateDocument } from '../data-access/affiliates';
import { toAffiliateLink, type LinkDocument } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';
import { affiliateCreated } from './affiliate-events';
import { claimGeneratedSlug, claimSlug } from './affiliate-links';
import { assignablePlan, planSummaryOf } from './commission-plans';
import { programSettingsOf } from './program-settings';

export const duplicateEmail = (email: string) =>
  badRequest(`email: an affiliate with email ${email} already exists in this program`, 'email_taken', 'email');

/**
 * Claims the first link, then writes the affiliate together with affiliate.created. Without
 * multi-document transactions the link comes first: if the affiliate cannot be written, the link
 * is released again; a crash in between leaves a link of no affiliate, which every read ignores.
 */
export async function createAffiliate(
  repositories: Repositories,
  programId: string,
  input: CreateAffiliateBody,
  signup?: Pick<SignupAffiliateBody, 'signupAnswers' | 'status'>,
): Promise<Affiliate> {
  if (await repositories.affiliates.byEmail(programId, input.email)) throw duplicateEmail(input.email);

  const settings = await programSettingsOf(repositories, programId);
  const ownPlan = input.commissionPlanId === undefined ? null : await assignablePlan(repositories, programId, input.commissionPlanId);
  const affiliateId = randomUUID();
  const owner = { programId, affiliateId };
  let link: LinkDocument | null;
  if (input.affiliateLink !== undefined) {
    link = await claimSlug(repositories, { ...owner, slug: input.affiliateLink });
    if (!link) throw badRequest(LINK_MESSAGES.inUseOnCreate, 'link_taken', 'link');
  } else {
    link = await claimGeneratedSlug(repositories, { ...owner, email: input.email });
  }

  const now = new Date();
  const affiliate: AffiliateDocument = {
    _id: affiliateId,
    programId,
    firstName: input.firstName,
    lastName: input.lastName,
    email: input.email,
    emailKey: emailKeyOf(programId, input.email),
    // A sign-up says its status: the gateway read requireApproval from the program itself, which this service learns a moment later.
    status: signup?.status ?? (settings.requireApproval ? 'PENDING' : 'ACTIVE'),
    commissionRate: input.commissionRate ?? settings.defaultCommissionRate,
    firstLinkId: link._id,
    commissionPlanId: ownPlan?._id ?? null,
    commissionTier: null,
    payoutDetails: null,
    ...(signup ? { signupAnswers: signup.signupAnswers } : {}),
    createdAt: now,
    updatedAt: now,
  };
  const links = [toAffiliateLink(link)];
  // Its own plan was just read; without one, the program's default.
  const plan = ownPlan ? { id: ownPlan._id, name: ownPlan.name } : await planSummaryOf(repositories, affiliate);
  try {
    await repositories.affiliates.insert(affiliate, (stored) => [affiliateCreated(stored, links, plan)]);
  } catch (error) {
    await repositories.links.discardUnannounced(programId, link._id);
    if (error instanceof UniqueKeyConflict) throw duplicateEmail(input.email);
    throw error;
  }
  return toAffiliate(affiliate, links, plan);
}

/** An application from the program's sign-up page, already checked against its questions by the gateway: an affiliate with its answers and a generated first link. */
export function signUpAffiliate(repositories: Repositories, programId: string, application: SignupAffiliateBody): Promise<Affiliate> {
  const { signupAnswers, status, ...person } = application;
  return createAffiliate(repositories, programId, person, { signupAnswers, status });
}
