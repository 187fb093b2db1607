import type { Connection, Model } from 'mongoose';
import { couponModel, type CouponRecord } from './coupon-model';
import { departedAffiliateModel, type DepartedAffiliateRecord } from './departed-affiliate-model';
import { promotionalCodeModel, type PromotionalCodeRecord } from './promotional-code-model';
import { redemptionModel, type RedemptionRecord } from './redemption-model';

export type CouponModels = {
  coupons: Model<CouponRecord>;
  promotionalCodes: Model<PromotionalCodeRecord>;
  redemptions: Model<RedemptionRecord>;
  departedAffiliates: Model<DepartedAffiliateRecord>;
};

export function couponModels(connection: Connection): CouponModels {
  return {
    coupons: couponModel(connection),
    promotionalCodes: promotionalCodeModel(connection),
    redemptions: redemptionModel(connection),
    departedAffiliates: departedAffiliateModel(connection),
  };
}
