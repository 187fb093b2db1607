import { CustomerClaims, type StoreContext } from '@affiliate/platform';
import { CustomerPaymentRepository } from './customer-payments';
import { PayoutRunLeases } from './payout-runs';
import { PayoutRepository } from './payouts';
import { SaleRepository } from './sales';
import { StripeEventClaims, StripeLinkRepository, StripeSettingsRepository } from './stripe-integration';

export function createRepositories(context: StoreContext) {
  return {
    sales: new SaleRepository(context),
    customerPayments: new CustomerPaymentRepository(context),
    payouts: new PayoutRepository(context),
    payoutRuns: new PayoutRunLeases(context),
    stripeSettings: new StripeSettingsRepository(context),
    stripeLinks: new StripeLinkRepository(context),
    stripeEvents: new StripeEventClaims(context),
    customerClaims: new CustomerClaims(context),
  };
}

export type SaleRepositories = ReturnType<typeof createRepositories>;
