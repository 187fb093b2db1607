import type { StoreContext } from '@affiliate/platform';
import { AffiliateRepository } from './affiliates';
import { ClickCounterRepository } from './click-counters';
import { CommissionPlanRepository, DefaultPlanRepository } from './commission-plans';
import { LinkActivityRepository } from './link-activity';
import { LinkRepository } from './links';
import { ProgramSettingsRepository } from './programs';

export function createRepositories(context: StoreContext) {
  return {
    affiliates: new AffiliateRepository(context),
    links: new LinkRepository(context),
    linkActivity: new LinkActivityRepository(context),
    clickCounters: new ClickCounterRepository(context),
    programs: new ProgramSettingsRepository(context),
    commissionPlans: new CommissionPlanRepository(context),
    defaultPlans: new DefaultPlanRepository(context),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
