import { notFound } from '@affiliate/platform';
import type { CouponRecord } from './coupon-model';
import type { CouponModels } from './models';
import type { PromotionalCodeRecord } from './promotional-code-model';

export async function findCouponRecord(models: CouponModels, programId: string, couponId: string): Promise<CouponRecord | null> {
  return models.coupons.findOne({ programId, _id: couponId }).lean<CouponRecord>();
}

export async function requireCouponRecord(models: CouponModels, programId: string, couponId: string): Promise<CouponRecord> {
  const coupon = await findCouponRecord(models, programId, couponId);
  if (!coupon) throw notFound(`Coupon ${couponId} not found in this program`);
  return coupon;
}

/** Codes of a coupon, newest first, the order `promotionalCodes` is listed in. */
export async function codesOfCoupon(models: CouponModels, programId: string, couponId: string): Promise<PromotionalCodeRecord[]> {
  return models.promotionalCodes.find({ programId, couponId }).sort({ createdAt: -1, _id: -1 }).lean<PromotionalCodeRecord[]>();
}

export async function codesOfCoupons(
  models: CouponModels,
  programId: string,
  couponIds: string[],
): Promise<Map<string, PromotionalCodeRecord[]>> {
  const byCoupon = new Map<string, PromotionalCodeRecord[]>(couponIds.map((id) => [id, []]));
  if (couponIds.length === 0) return byCoupon;
  const codes = await models.promotionalCodes
    .find({ programId, couponId: { $in: couponIds } })
    .sort({ createdAt: -1, _id: -1 })
    .lean<PromotionalCodeRecord[]>();
  for (const code of codes) byCoupon.get(code.couponId)?.push(code);
  return byCoupon;
}

export async function couponsByIds(models: CouponModels, programId: string, couponIds: string[]): Promise<Map<string, CouponRecord>> {
  const unique = [...new Set(couponIds)];
  if (unique.length === 0) return new Map();
  const coupons = await models.coupons.find({ programId, _id: { $in: unique } }).lean<CouponRecord[]>();
  return new Map(coupons.map((coupon) => [coupon._id, coupon]));
}
