import type { Referral, UpdateReferralBody } from '@affiliate/contracts';
import { badRequest, notFound, UniqueKeyConflict } from '@affiliate/platform';
import type { ReferralRepositories } from '../data-access/repositories';
import { emailKeyOf, toReferral, type ReferralDocument } from '../data-access/referrals';
import { DUPLICATE_EMAIL_MESSAGE, referralUpdated } from './referral-events';

/** PUT /referrals: the fields the spec lists; referral.updated carries the stored state. */
export async function updateReferral(repositories: ReferralRepositories, programId: string, input: UpdateReferralBody): Promise<Referral> {
  const { referralId, ...changes } = input;
  if (Object.keys(changes).length === 0)
    throw badRequest('Nothing to update: send name, email, referredUserExternalId, plan or status', 'parameter_missing');
  const set: Partial<ReferralDocument> = { ...changes, updatedAt: new Date() };
  if (changes.email !== undefined) set.emailKey = emailKeyOf(programId, changes.email);
  try {
    const updated = await repositories.referrals.change(programId, referralId, () => ({
      set,
      events: (next) => [referralUpdated(next)],
    }));
    if (!updated) throw notFound(`No referral with id ${referralId} in this program`);
    return toReferral(updated);
  } catch (error) {
    if (error instanceof UniqueKeyConflict) throw badRequest(DUPLICATE_EMAIL_MESSAGE, 'email_taken', 'email');
    throw error;
  }
}
