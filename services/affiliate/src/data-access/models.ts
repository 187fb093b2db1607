import type { Connection } from 'mongoose';
import { affiliateModel } from './affiliates';
import { clickCounterModel } from './click-counters';
import { linkActivityModel } from './link-activity';
import { linkModel } from './links';
import { programModel } from './programs';

export function createModels(connection: Connection) {
  return {
    affiliates: affiliateModel(connection),
    links: linkModel(connection),
    linkActivity: linkActivityModel(connection),
    clickCounters: clickCounterModel(connection),
    programs: programModel(connection),
  };
}

export type Models = ReturnType<typeof createModels>;
