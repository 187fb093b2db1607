import { CustomerClaims, type StoreContext } from '@affiliate/platform';
import { ReferralRepository } from './referrals';

export type ReferralRepositories = { referrals: ReferralRepository; customerClaims: CustomerClaims };

export function createRepositories(context: StoreContext): ReferralRepositories {
  return { referrals: new ReferralRepository(context), customerClaims: new CustomerClaims(context) };
}
