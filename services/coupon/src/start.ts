import { runService } from '@affiliate/platform';
import { buildCouponService } from './service';

runService({ name: 'coupon', config: {}, build: (context) => buildCouponService(context) });
