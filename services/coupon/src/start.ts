import { runService, serviceUrlSetting } from '@affiliate/platform';
import { buildCouponService } from './service';

runService({
  name: 'coupon',
  config: { AFFILIATE_URL: serviceUrlSetting('affiliate') },
  build: (context, config) => buildCouponService(context, { affiliateUrl: config.AFFILIATE_URL }),
});
