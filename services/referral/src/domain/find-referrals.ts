import type { Referral } from '@affiliate/contracts';
import { findPage, notFound, type PageRequest } from '@affiliate/platform';
import type { FilterQuery } from 'mongoose';
import type { ReferralModels } from '../data-access/models';
import { emailKeyOf, toReferral, type ReferralDocument } from '../data-access/referrals';

export type ReferralFilters = { email?: string; affiliateId?: string; referredUserExternalId?: string };

export async function referralById(models: ReferralModels, programId: string, referralId: string): Promise<Referral> {
  const referral = await models.referrals.findOne({ _id: referralId, programId }).lean();
  if (!referral) throw notFound(`No referral with id ${referralId} in this program`);
  return toReferral(referral);
}

/** Referrals matching every filter given (none: the whole program), newest first, one page. */
export async function listReferrals(
  models: ReferralModels,
  programId: string,
  filters: ReferralFilters,
  page: PageRequest,
): Promise<{ items: Referral[]; nextCursor: string | null }> {
  const scope: FilterQuery<ReferralDocument> = { programId };
  if (filters.email !== undefined) scope.emailKey = emailKeyOf(programId, filters.email);
  if (filters.affiliateId !== undefined) scope.affiliateId = filters.affiliateId;
  if (filters.referredUserExternalId !== undefined) scope.referredUserExternalId = filters.referredUserExternalId;
  const { items, nextCursor } = await findPage(models.referrals, scope, page);
  return { items: items.map(toReferral), nextCursor };
}
