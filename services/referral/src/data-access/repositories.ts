import type { StoreContext } from '@affiliate/platform';
import { ReferralRepository } from './referrals';

export type ReferralRepositories = { referrals: ReferralRepository };

export function createRepositories(context: StoreContext): ReferralRepositories {
  return { referrals: new ReferralRepository(context) };
}
