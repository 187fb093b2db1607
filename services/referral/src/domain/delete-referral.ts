import { notFound } from '@affiliate/platform';
import type { ReferralRepositories } from '../data-access/repositories';
import { referralDeleted } from './referral-events';

/** Removes the referral with referral.deleted in one write; its email can be referred again at once. */
export async function deleteReferral(
  repositories: ReferralRepositories,
  programId: string,
  referralId: string,
): Promise<{ id: string; deleted: true }> {
  const deleted = await repositories.referrals.remove(programId, referralId, (current) => [referralDeleted(current)]);
  if (!deleted) throw notFound(`No referral with id ${referralId} in this program`);
  return { id: referralId, deleted: true };
}
