import type { StoreContext } from '@affiliate/platform';
import { AutoCouponRuleIndex } from './auto-coupon-rules';
import { CouponRepository } from './coupon-model';
import { IssuedPairRepository } from './issued-pairs';
import { DepartedAffiliateRepository } from './departed-affiliate-model';
import { PromotionalCodeRepository } from './promotional-code-model';
import { RedemptionRepository } from './redemption-model';

export function createRepositories(context: StoreContext) {
  return {
    coupons: new CouponRepository(context),
    promotionalCodes: new PromotionalCodeRepository(context),
    redemptions: new RedemptionRepository(context),
    departedAffiliates: new DepartedAffiliateRepository(context),
    autoCouponRules: new AutoCouponRuleIndex(context),
    issuedPairs: new IssuedPairRepository(context),
  };
}

export type CouponRepositories = ReturnType<typeof createRepositories>;
