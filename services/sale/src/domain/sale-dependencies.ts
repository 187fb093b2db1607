import type { Logger, ServiceClient } from '@affiliate/platform';
import type { SaleModels } from '../data-access/models';

/** What the sale use cases work with: their own collection and the three services they ask. */
export type SaleDependencies = {
  models: SaleModels;
  coupons: ServiceClient;
  affiliates: ServiceClient;
  referrals: ServiceClient;
  logger: Logger;
};
