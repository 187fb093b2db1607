import type { ServiceContext, ServiceParts } from '@affiliate/platform';
import { Router } from 'express';

/** Placeholder until its issue lands: the service boots, reports health and refuses unknown routes. */
export function buildReferralService(_context: ServiceContext): ServiceParts {
  return { routes: Router(), outboxModels: [] };
}
