import type { Coupon } from '@affiliate/contracts';
import { findPage, notFound, type PageRequest } from '@affiliate/platform';
import type { FilterQuery } from 'mongoose';
import type { CouponRecord } from '../data-access/coupon-model';
import type { CouponModels } from '../data-access/models';
import { codesOfCoupons } from '../data-access/reads';
import { toCoupon } from '../data-access/representations';
import { presentExternalIdKey } from '../data-access/unique-keys';
import { describeLookup } from './describe-lookup';

export type CouponLookup = { id?: string; name?: string; externalId?: string };

export const isSingleCouponLookup = (lookup: CouponLookup): boolean =>
  lookup.id !== undefined || lookup.name !== undefined || lookup.externalId !== undefined;

async function withCodes(models: CouponModels, programId: string, coupons: CouponRecord[]): Promise<Coupon[]> {
  const codes = await codesOfCoupons(models, programId, coupons);
  return coupons.map((coupon) => toCoupon(coupon, codes.get(coupon._id) ?? []));
}

/** By id, externalId or name (the newest with that name); several given must all match. */
export async function findCoupon(models: CouponModels, programId: string, lookup: CouponLookup): Promise<Coupon> {
  const filter: FilterQuery<CouponRecord> = { programId };
  if (lookup.id !== undefined) filter._id = lookup.id;
  if (lookup.externalId !== undefined) filter.externalIdKey = presentExternalIdKey(lookup.externalId);
  if (lookup.name !== undefined) filter.name = lookup.name;
  const coupon = await models.coupons.findOne(filter).sort({ createdAt: -1, _id: -1 }).lean<CouponRecord>();
  if (!coupon) {
    throw notFound(`No coupon with ${describeLookup(lookup)} in this program`);
  }
  const [found] = await withCodes(models, programId, [coupon]);
  return found as Coupon;
}

export async function listCoupons(
  models: CouponModels,
  programId: string,
  page: PageRequest,
): Promise<{ coupons: Coupon[]; nextCursor: string | null }> {
  const { items, nextCursor } = await findPage(models.coupons, { programId }, page);
  return { coupons: await withCodes(models, programId, items as CouponRecord[]), nextCursor };
}
