// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry';
import { runService, serviceUrlSetting } from '@affiliate/platform';
import { buildReferralService } from './service';

runService({
  name: 'referral',
  config: { AFFILIATE_URL: serviceUrlSetting('affiliate') },
  build: (context, config) => buildReferralService(context, { affiliateUrl: config.AFFILIATE_URL }),
});
