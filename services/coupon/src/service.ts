import { createServiceClient, type ServiceContext, type ServiceParts } from '@affiliate/platform';
import { affiliateDirectory } from './data-access/affiliate-directory';
import { couponModels } from './data-access/models';
import { couponRoutes } from './entry-points/api/routes';
import { subscribe } from './entry-points/messaging/subscriptions';

export type CouponServiceDeps = { affiliateUrl: string };

export function buildCouponService(context: ServiceContext, deps: CouponServiceDeps): ServiceParts {
  const models = couponModels(context.connection);
  const affiliateClient = createServiceClient({
    name: 'affiliate',
    baseUrl: deps.affiliateUrl,
    internalToken: context.settings.internalToken,
    logger: context.logger,
  });
  return {
    routes: couponRoutes({ models, affiliates: affiliateDirectory(affiliateClient) }),
    subscribe: () => subscribe(context, models),
    close: async () => affiliateClient.shutdown(),
  };
}
