import type { Referral, UpdateReferralBody } from '@affiliate/contracts';
import { badRequest, isDuplicateKey, notFound, updateWithEvents } from '@affiliate/platform';
import type { ReferralModels } from '../data-access/models';
import { emailKeyOf, toReferral, type ReferralDocument } from '../data-access/referrals';
import { DUPLICATE_EMAIL_MESSAGE, referralUpdated } from './referral-events';

/** PUT /referrals: the fields the spec lists; referral.updated carries the stored state. */
export async function updateReferral(models: ReferralModels, programId: string, input: UpdateReferralBody): Promise<Referral> {
  const { referralId, ...changes } = input;
  if (Object.keys(changes).length === 0) throw badRequest('Nothing to update: send name, email, referredUserExternalId, plan or status');
  const set: Partial<ReferralDocument> = { ...changes, updatedAt: new Date() };
  if (changes.email !== undefined) set.emailKey = emailKeyOf(programId, changes.email);
  try {
    const updated = await updateWithEvents(models.referrals, { _id: referralId, programId }, () => ({
      set,
      events: (next) => [referralUpdated(next)],
    }));
    if (!updated) throw notFound(`No referral with id ${referralId} in this program`);
    return toReferral(updated);
  } catch (error) {
    if (isDuplicateKey(error)) throw badRequest(DUPLICATE_EMAIL_MESSAGE);
    throw error;
  }
}
