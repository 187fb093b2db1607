import { createRouter, type ServiceContext, type ServiceParts } from '@affiliate/platform';
import { createRepositories } from './data-access/repositories';
import type { RenamePolicy } from './domain/change-links';
import { commissionPlanRoutes } from './entry-points/api/commission-plan-routes';
import { internalRoutes } from './entry-points/api/internal-routes';
import { affiliateRoutes } from './entry-points/api/routes';
import { subscriptions } from './entry-points/messaging/subscriptions';

/** Affiliates, their referral links, clicks and per-link statistics, and the commission plans they earn by (DESIGN.md section 9). */
export function buildAffiliateService(context: ServiceContext, options: Partial<RenamePolicy> = {}): ServiceParts {
  const repositories = createRepositories(context);
  const routes = createRouter();
  routes.use(affiliateRoutes(context, repositories, { previousLinkDays: options.previousLinkDays ?? null }));
  routes.use(commissionPlanRoutes(repositories));
  routes.use(internalRoutes(repositories));
  return {
    routes,
    subscribe: subscriptions(context, repositories),
    // A click changes counters and claims, and a commission plan (its program's default included) is
    // terms that no event announces: served however far behind the webhooks are.
    writesWithoutEvents: ['POST /clicks', 'POST /commission-plans', 'PUT /commission-plans', 'DELETE /commission-plans'],
  };
}
