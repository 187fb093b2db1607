import { createServiceClient, type ServiceContext, type ServiceParts } from '@affiliate/platform';
import { createRepositories } from './data-access/repositories';
import { referralRoutes } from './entry-points/api/routes';

export type ReferralServiceDeps = { affiliateUrl: string };

export function buildReferralService(context: ServiceContext, deps: ReferralServiceDeps): ServiceParts {
  const repositories = createRepositories(context);
  const affiliates = createServiceClient({
    name: 'affiliate',
    baseUrl: deps.affiliateUrl,
    internalToken: context.settings.internalToken,
    logger: context.logger,
    metrics: context.metrics.circuits,
  });
  return {
    routes: referralRoutes(context, repositories, affiliates),
    close: async () => affiliates.shutdown(),
  };
}
