import { createServiceClient, type ServiceContext, type ServiceParts } from '@affiliate/platform';
import { affiliateDirectory } from './data-access/affiliate-directory';
import { migrateToProgramKeys } from './data-access/key-migration';
import { createRepositories } from './data-access/repositories';
import { couponRoutes } from './entry-points/api/routes';
import { subscribe } from './entry-points/messaging/subscriptions';

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
  return {
    prepare: () => migrateToProgramKeys(context.connection),
    routes: couponRoutes({ repositories, affiliates }),
    subscribe: () => subscribe(context, repositories, affiliates),
    close: async () => affiliateClient.shutdown(),
  };
}
