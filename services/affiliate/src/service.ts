import type { ServiceContext, ServiceParts } from '@affiliate/platform';
import { Router } from 'express';
import { createRepositories } from './data-access/repositories';
import { internalRoutes } from './entry-points/api/internal-routes';
import { affiliateRoutes } from './entry-points/api/routes';
import { subscriptions } from './entry-points/messaging/subscriptions';

/** Affiliates, their referral links, clicks and per-link statistics. */
export function buildAffiliateService(context: ServiceContext): ServiceParts {
  const repositories = createRepositories(context);
  const routes = Router();
  routes.use(affiliateRoutes(context, repositories));
  routes.use(internalRoutes(repositories));
  return { routes, subscribe: subscriptions(context, repositories) };
}
