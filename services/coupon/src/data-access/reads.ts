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

/**
 * Every live code of a coupon, by its couponId, whether or not the coupon is still there: the delete
 * cascade must also find a code created while it ran, which no coupon document lists.
 */
export async function codesOfCoupon(models: CouponModels, programId: string, couponId: string): Promise<PromotionalCodeRecord[]> {
  return models.promotionalCodes.find({ programId, couponId }).sort({ createdAt: -1, _id: -1 }).lean<PromotionalCodeRecord[]>();
}

const NEWEST_FIRST = (a: PromotionalCodeRecord, b: PromotionalCodeRecord) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/**
 * The codes of each coupon, newest first. Found by their ids, which each coupon keeps: a lookup by
 * _id however many codes other coupons and programs have. Coupons stored before the ids were kept
 * fall back to a query on couponId.
 */
export async function codesOfCoupons(models: CouponModels, programId: string, coupons: CouponRecord[]): Promise<Map<string, PromotionalCodeRecord[]>> {
  const byCoupon = new Map<string, PromotionalCodeRecord[]>(coupons.map((coupon) => [coupon._id, []]));
  const ids = coupons.flatMap((coupon) => coupon._promotionalCodeIds ?? []);
  const untracked = coupons.filter((coupon) => coupon._promotionalCodeIds === undefined).map((coupon) => coupon._id);
  const [tracked, legacy] = await Promise.all([
    ids.length > 0 ? models.promotionalCodes.find({ _id: { $in: ids }, programId }).lean<PromotionalCodeRecord[]>() : [],
    untracked.length > 0 ? models.promotionalCodes.find({ programId, couponId: { $in: untracked } }).lean<PromotionalCodeRecord[]>() : [],
  ]);
  // An id whose code was never stored (a crash between the two writes) simply finds nothing.
  for (const code of [...tracked, ...legacy].sort(NEWEST_FIRST)) byCoupon.get(code.couponId)?.push(code);
  return byCoupon;
}

/** Adds a code's id to its coupon before the code is stored (see CouponRecord._promotionalCodeIds). */
export async function rememberCodeOfCoupon(models: CouponModels, programId: string, couponId: string, codeId: string): Promise<void> {
  await models.coupons.updateOne({ _id: couponId, programId }, { $addToSet: { _promotionalCodeIds: codeId } });
}

export async function couponsByIds(models: CouponModels, programId: string, couponIds: string[]): Promise<Map<string, CouponRecord>> {
  const unique = [...new Set(couponIds)];
  if (unique.length === 0) return new Map();
  const coupons = await models.coupons.find({ programId, _id: { $in: unique } }).lean<CouponRecord[]>();
  return new Map(coupons.map((coupon) => [coupon._id, coupon]));
}
