import type { Coupon } from '@affiliate/contracts';
import { notFound, type PageRequest, type Period } from '@affiliate/platform';
import type { CouponLookup, CouponRecord } from '../data-access/coupon-model';
import type { CouponRepositories } from '../data-access/repositories';
import { toCoupon } from '../data-access/representations';
import { describeLookup } from './describe-lookup';

export const isSingleCouponLookup = (lookup: CouponLookup): boolean =>
  lookup.id !== undefined || lookup.name !== undefined || lookup.externalId !== undefined;

async function withCodes(repositories: CouponRepositories, programId: string, coupons: CouponRecord[]): Promise<Coupon[]> {
  const codes = await repositories.promotionalCodes.ofCoupons(programId, coupons);
  return coupons.map((coupon) => toCoupon(coupon, codes.get(coupon._id) ?? []));
}

/** By id, externalId or name (the newest with that name); several given must all match. */
export async function findCoupon(repositories: CouponRepositories, programId: string, lookup: CouponLookup): Promise<Coupon> {
  const coupon = await repositories.coupons.lookUp(programId, lookup);
  if (!coupon) {
    throw notFound(`No coupon with ${describeLookup(lookup)} in this program`);
  }
  const [found] = await withCodes(repositories, programId, [coupon]);
  return found as Coupon;
}

export async function listCoupons(
  repositories: CouponRepositories,
  programId: string,
  createdAt: Period | undefined,
  page: PageRequest,
): Promise<{ coupons: Coupon[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.coupons.list(programId, createdAt, page);
  return { coupons: await withCodes(repositories, programId, items), nextCursor };
}
