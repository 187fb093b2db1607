// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry';
import { runService } from '@affiliate/platform';
import { z } from 'zod';
import { buildAffiliateService } from './service';

runService({
  name: 'affiliate',
  // Unset: a renamed link's old slug leads to it for ever (published links never break).
  config: { PREVIOUS_LINK_DAYS: z.coerce.number().int().min(0).max(36_500).optional() },
  build: (context, config) => buildAffiliateService(context, { previousLinkDays: config.PREVIOUS_LINK_DAYS ?? null }),
});
