import {
  createRouter,
  createPayoutMetrics,
  createServiceClient,
  HeavyOperations,
  type ServiceContext,
  type ServiceParts,
} from '@affiliate/platform';
import { createRepositories } from './data-access/repositories';
import type { SaleDependencies } from './domain/sale-dependencies';
import { saleRoutes } from './entry-points/api/routes';
import { stripeRoutes } from './entry-points/api/stripe-routes';

export type SaleServiceDeps = {
  couponUrl: string;
  affiliateUrl: string;
  referralUrl: string;
  /** Each upstream call is bounded by it, and repeated failures open the circuit: a dead service is a quick 503. */
  upstreamTimeoutMs?: number;
  /** Heavy operations (reports, payout runs, exports) of one program at once; one more is a 429. */
  heavyOperationsPerProgram?: number;
};

/** Below the gateway's own upstream timeout (10 s), so a slow dependency answers 503 here before the gateway gives up. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 8000;

export function buildSaleService(context: ServiceContext, deps: SaleServiceDeps): ServiceParts {
  const client = (name: string, baseUrl: string) =>
    createServiceClient({
      name,
      baseUrl,
      internalToken: context.settings.internalToken,
      logger: context.logger,
      timeoutMs: deps.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
      metrics: context.metrics.circuits,
    });
  const dependencies: SaleDependencies = {
    repositories: createRepositories(context),
    coupons: client('coupon', deps.couponUrl),
    affiliates: client('affiliate', deps.affiliateUrl),
    referrals: client('referral', deps.referralUrl),
    logger: context.logger,
    payoutMetrics: createPayoutMetrics(context.metrics.registry),
    heavyOperations: new HeavyOperations(deps.heavyOperationsPerProgram),
  };
  return {
    routes: createRouter().use(saleRoutes(context, dependencies), stripeRoutes(context, dependencies)),
    // The Stripe settings are the program's configuration, not an object with events.
    writesWithoutEvents: ['PUT /integrations/stripe'],
    close: async () => {
      for (const upstream of [dependencies.coupons, dependencies.affiliates, dependencies.referrals]) upstream.shutdown();
    },
  };
}
