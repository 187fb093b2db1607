import { createServiceClient, type ServiceContext, type ServiceParts } from '@affiliate/platform';
import { createModels } from './data-access/models';
import { referralRoutes } from './entry-points/api/routes';

export type ReferralServiceDeps = { affiliateUrl: string };

export function buildReferralService(context: ServiceContext, deps: ReferralServiceDeps): ServiceParts {
  const models = createModels(context.connection);
  const affiliates = createServiceClient({
    name: 'affiliate',
    baseUrl: deps.affiliateUrl,
    internalToken: context.settings.internalToken,
    logger: context.logger,
  });
  return {
    routes: referralRoutes(context, models, affiliates),
    close: async () => affiliates.shutdown(),
  };
}
