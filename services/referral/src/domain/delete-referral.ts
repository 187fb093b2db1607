import { notFound, tombstoneWithEvents } from '@affiliate/platform';
import type { ReferralModels } from '../data-access/models';
import { referralDeleted } from './referral-events';

/** Removes the referral with referral.deleted in one write; its email can be referred again at once. */
export async function deleteReferral(models: ReferralModels, programId: string, referralId: string): Promise<{ id: string; deleted: true }> {
  const deleted = await tombstoneWithEvents(models.referrals, { _id: referralId, programId }, (current) => [referralDeleted(current)], ['emailKey']);
  if (!deleted) throw notFound(`No referral with id ${referralId} in this program`);
  return { id: referralId, deleted: true };
}
