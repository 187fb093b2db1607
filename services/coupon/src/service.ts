import type { ServiceContext, ServiceParts } from '@affiliate/platform';
import { Router } from 'express';

export function buildCouponService(_context: ServiceContext): ServiceParts {
  return { routes: Router(), outboxModels: [] };
}
