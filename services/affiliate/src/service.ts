import type { ServiceContext, ServiceParts } from '@affiliate/platform';
import { Router } from 'express';
import { createModels } from './data-access/models';
import { internalRoutes } from './entry-points/api/internal-routes';
import { affiliateRoutes } from './entry-points/api/routes';
import { subscriptions } from './entry-points/messaging/subscriptions';

/** Affiliates, their referral links, clicks and per-link statistics. */
export function buildAffiliateService(context: ServiceContext): ServiceParts {
  const models = createModels(context.connection);
  const routes = Router();
  routes.use(affiliateRoutes(context, models));
  routes.use(internalRoutes(models));
  return { routes, subscribe: subscriptions(context, models) };
}
