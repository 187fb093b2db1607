// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry';
import { runService, serviceUrlSetting } from '@affiliate/platform';
import { buildCouponService } from './service';

runService({
  name: 'coupon',
  config: { AFFILIATE_URL: serviceUrlSetting('affiliate') },
  build: (context, config) => buildCouponService(context, { affiliateUrl: config.AFFILIATE_URL }),
});
