import { createServiceClient, type ServiceContext, type ServiceParts } from '@affiliate/platform';
import { affiliateDirectory } from './data-access/affiliate-directory';
import { migrateToProgramKeys } from './data-access/key-migration';
import { createRepositories } from './data-access/repositories';
import { couponRoutes } from './entry-points/api/routes';
import { subscribe } from './entry-points/messaging/subscriptions';
import { staleRedemptionSweep } from './entry-points/scheduler/stale-redemptions';

export type CouponServiceDeps = { affiliateUrl: string };

export function buildCouponService(context: ServiceContext, deps: CouponServiceDeps): ServiceParts {
  const repositories = createRepositories(context);
  const affiliateClient = createServiceClient({
    name: 'affiliate',
    baseUrl: deps.affiliateUrl,
    internalToken: context.settings.internalToken,
    logger: context.logger,
    metrics: context.metrics.circuits,
  });
  const affiliates = affiliateDirectory(affiliateClient);
  const sweep = staleRedemptionSweep(repositories, context.logger);
  return {
    prepare: () => migrateToProgramKeys(context.connection),
    routes: couponRoutes({ repositories, affiliates }),
    subscribe: async () => {
      await subscribe(context, repositories, affiliates);
      sweep.start();
    },
    close: async () => {
      await sweep.stop();
      affiliateClient.shutdown();
    },
  };
}
