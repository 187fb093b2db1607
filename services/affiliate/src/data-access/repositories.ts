import type { StoreContext } from '@affiliate/platform';
import { AffiliateRepository } from './affiliates';
import { ClickCounterRepository } from './click-counters';
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
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
