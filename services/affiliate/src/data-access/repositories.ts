import type { StoreContext } from '@affiliate/platform';
import { AffiliateRepository } from './affiliates';
import { ClickClaimRepository } from './click-claims';
import { ClickCounterRepository } from './click-counters';
import { ClickSecretRepository } from './click-secrets';
import { CommissionPlanRepository, DefaultPlanRepository } from './commission-plans';
import { LinkActivityRepository } from './link-activity';
import { LinkRepository } from './links';
import { ProgramSettingsRepository } from './programs';
import { VisitorRepository } from './visitors';

export function createRepositories(context: StoreContext) {
  return {
    affiliates: new AffiliateRepository(context),
    links: new LinkRepository(context),
    linkActivity: new LinkActivityRepository(context),
    clickCounters: new ClickCounterRepository(context),
    clickClaims: new ClickClaimRepository(context),
    clickSecrets: new ClickSecretRepository(context),
    visitors: new VisitorRepository(context),
    programs: new ProgramSettingsRepository(context),
    commissionPlans: new CommissionPlanRepository(context),
    defaultPlans: new DefaultPlanRepository(context),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
