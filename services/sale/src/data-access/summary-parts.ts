import { AffiliatesSummary, ReferralsSummary } from '@affiliate/contracts';
import type { ServiceClient } from '@affiliate/platform';
import { expectShape } from './upstream';

/**
 * The parts of the program's summary the other services own, each counted by its own database: the
 * affiliates (with the program's reporting currency) and the referrals of [from, to).
 */
export async function summaryPartsOf(
  clients: { affiliates: ServiceClient; referrals: ServiceClient },
  programId: string,
  period: { from: Date; to: Date },
) {
  const query = { from: period.from.toISOString(), to: period.to.toISOString() };
  const [affiliates, referrals] = await Promise.all([
    clients.affiliates.request({ method: 'GET', path: '/internal/affiliate-summary', programId, query }),
    clients.referrals.request({ method: 'GET', path: '/internal/referral-summary', programId, query }),
  ]);
  return {
    affiliates: expectShape('affiliate', AffiliatesSummary, affiliates),
    referrals: expectShape('referral', ReferralsSummary, referrals),
  };
}
