import { LINK_MESSAGES, type Affiliate, type AffiliateLink, type PayoutDetailsBody, type UpdateAffiliateBody } from '@affiliate/contracts';
import { badRequest, notFound, UniqueKeyConflict } from '@affiliate/platform';
import { emailKeyOf, toAffiliate, type AffiliateDocument, type PlanSummary, type StoredPayoutDetails } from '../data-access/affiliates';
import type { LinkDocument } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';
import { affiliateDeleted, affiliateUpdated } from './affiliate-events';
import { claimSlug, linksOfAffiliate } from './affiliate-links';
import { assignablePlan, planOf, planSummaryOf } from './commission-plans';
import { tierOn } from './commission-tiers';
import { duplicateEmail } from './create-affiliate';
import { affiliateById, withLinks } from './find-affiliates';

const storedPayoutDetails = (details: PayoutDetailsBody): StoredPayoutDetails => ({
  method: details.method,
  email: details.email ?? null,
  accountHolder: details.accountHolder ?? null,
  iban: details.iban ?? null,
  note: details.note ?? null,
});

const noAffiliate = (affiliateId: string) => notFound(`No affiliate with id ${affiliateId} in this program`);

/** A slug for the affiliate: appended when new, nothing when it already has it, 400 when another link has it. */
async function appendSlug(repositories: Repositories, affiliate: AffiliateDocument, slug: string): Promise<LinkDocument | null> {
  const holder = await repositories.links.bySlug(affiliate.programId, slug);
  if (holder?.affiliateId === affiliate._id) return null;
  const added = await claimSlug(repositories, { programId: affiliate.programId, affiliateId: affiliate._id, slug });
  if (!added) throw badRequest(LINK_MESSAGES.alreadyExists, 'link_taken', 'link');
  return added;
}

/**
 * Profile, status and commission changes, and `affiliateLink`, which appends a slug (never renames
 * or removes one). One affiliate.updated carries the result.
 */
export async function updateAffiliate(repositories: Repositories, programId: string, input: UpdateAffiliateBody): Promise<Affiliate> {
  const current = await affiliateById(repositories, programId, input.affiliateId);
  if (!current) throw noAffiliate(input.affiliateId);
  const { affiliateId: _affiliateId, affiliateLink, payoutDetails, ...changes } = input;
  const profile: Partial<AffiliateDocument> = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  if (input.email !== undefined) profile.emailKey = emailKeyOf(programId, input.email);
  if (payoutDetails !== undefined) profile.payoutDetails = payoutDetails === null ? null : storedPayoutDetails(payoutDetails);
  // A plan reassignment: the tier is the one reached on the new plan (affiliate.updated carries both).
  const reassigned = input.commissionPlanId !== undefined && input.commissionPlanId !== (current.commissionPlanId ?? null);
  if (input.commissionPlanId) await assignablePlan(repositories, programId, input.commissionPlanId);

  const added = affiliateLink === undefined ? null : await appendSlug(repositories, current, affiliateLink);
  if (Object.keys(profile).length === 0 && !added) return withLinks(repositories, current);

  let links: AffiliateLink[] = [];
  let plan: PlanSummary | null = null;
  try {
    const next = await repositories.affiliates.change(programId, current._id, async (fresh) => {
      const assigned = { ...fresh, ...profile };
      const planDocument = await planOf(repositories, assigned);
      const tier = reassigned ? { commissionTier: await tierOn(repositories, assigned, planDocument) } : {};
      links = await linksOfAffiliate(repositories, programId, current._id);
      plan = planDocument ? { id: planDocument._id, name: planDocument.name } : null;
      const summary = plan;
      // previousAttributes compares with the affiliate as it was: its plan before a reassignment, its
      // links before the slug appended above (both are read beside the document, not from it).
      const linksBefore = added ? links.filter((link) => link.id !== added._id) : links;
      const summaryBefore = input.commissionPlanId === undefined ? summary : await planSummaryOf(repositories, fresh);
      return {
        set: { ...profile, ...tier, updatedAt: new Date() },
        events: (stored) => [affiliateUpdated(stored, links, summary)],
        previous: (old) => [affiliateUpdated(old, linksBefore, summaryBefore)],
      };
    });
    if (!next) throw noAffiliate(input.affiliateId);
    return toAffiliate(next, links, plan);
  } catch (error) {
    // The affiliate did not change, so neither may its links.
    if (added) await repositories.links.discardUnannounced(programId, added._id);
    if (error instanceof UniqueKeyConflict) throw duplicateEmail(input.email ?? '');
    throw error;
  }
}

/**
 * Removes the affiliate from the API with affiliate.deleted in the same write, releasing its email;
 * then its links, releasing their slugs. Past referrals and sales keep their affiliate id.
 */
export async function deleteAffiliate(
  repositories: Repositories,
  programId: string,
  affiliateId: string,
): Promise<{ id: string; deleted: true }> {
  const deleted = await repositories.affiliates.remove(programId, affiliateId, (current) => [affiliateDeleted(current)]);
  if (!deleted) throw noAffiliate(affiliateId);
  await repositories.links.discardOfAffiliate(programId, affiliateId);
  return { id: affiliateId, deleted: true };
}
