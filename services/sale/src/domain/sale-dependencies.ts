import type { HeavyOperations, Logger, PayoutMetrics, ServiceClient } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';

/** What the sale use cases work with: their own collection and the three services they ask. */
export type SaleDependencies = {
  repositories: SaleRepositories;
  coupons: ServiceClient;
  affiliates: ServiceClient;
  referrals: ServiceClient;
  logger: Logger;
  payoutMetrics?: PayoutMetrics;
  /** Reports, payout runs and exports of one program at once: at most a few (429 beyond). */
  heavyOperations: HeavyOperations;
};
