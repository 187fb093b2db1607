import type { Coupon, UpdateCouponBody } from '@affiliate/contracts';
import { badRequest, createEvent, isDuplicateKey, notFound, updateWithEvents } from '@affiliate/platform';
import type { FilterQuery } from 'mongoose';
import type { CouponRecord } from '../data-access/coupon-model';
import type { CouponModels } from '../data-access/models';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { codesOfCoupons } from '../data-access/reads';
import { metadataEntries, toCoupon } from '../data-access/representations';
import { externalIdKey } from '../data-access/unique-keys';

/** The discount itself never changes after creation, as in Stripe (DESIGN.md §3). */
export const IMMUTABLE_COUPON_FIELDS = ['couponType', 'percentOff', 'amountOff', 'currency', 'duration', 'durationInMonths'] as const;

export function refuseDiscountChange(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const sent = IMMUTABLE_COUPON_FIELDS.filter((field) => Object.prototype.hasOwnProperty.call(body, field));
  if (sent.length > 0) {
    throw badRequest(`${sent.join(', ')} cannot be changed: the discount of a coupon is fixed at creation; create a new coupon instead`);
  }
}

function changedFields(body: UpdateCouponBody, couponId: string): Partial<CouponRecord> {
  const set: Partial<CouponRecord> = { updatedAt: new Date() };
  if (body.name !== undefined) set.name = body.name;
  if (body.valid !== undefined) set.valid = body.valid;
  if (body.redeemBy !== undefined) set.redeemBy = body.redeemBy === null ? null : new Date(body.redeemBy);
  if (body.maxRedemptions !== undefined) set.maxRedemptions = body.maxRedemptions;
  if (body.productIds !== undefined) set.productIds = body.productIds;
  if (body.limitToProducts !== undefined) set.limitToProducts = body.limitToProducts;
  if (body.collectionIds !== undefined) set.collectionIds = body.collectionIds;
  if (body.metadata !== undefined) set.metadata = metadataEntries(body.metadata);
  if (body.externalId !== undefined) {
    set.externalId = body.externalId;
    set.externalIdKey = externalIdKey(couponId, body.externalId);
  }
  return set;
}

export async function updateCoupon(models: CouponModels, programId: string, body: UpdateCouponBody): Promise<Coupon> {
  const filter: FilterQuery<CouponRecord> = { programId, _id: body.couponId };
  // Redemptions increment timesRedeemed without touching the revision, so the new limit is
  // checked in the write's own filter: it can never land below a count that raced past it.
  if (typeof body.maxRedemptions === 'number') filter.timesRedeemed = { $lte: body.maxRedemptions };
  let codes: PromotionalCodeRecord[] = [];
  let updated: CouponRecord | null;
  try {
    updated = await updateWithEvents(models.coupons, filter, async (current) => {
      codes = (await codesOfCoupons(models, programId, [current])).get(current._id) ?? [];
      return {
        set: changedFields(body, current._id),
        events: (next) => [createEvent('coupon.updated', programId, toCoupon(next, codes))],
      };
    });
  } catch (error) {
    if (isDuplicateKey(error)) throw badRequest(`A coupon with externalId "${body.externalId}" already exists in this program`);
    throw error;
  }
  if (!updated) {
    const existing = await models.coupons.findOne({ programId, _id: body.couponId }).lean<CouponRecord>();
    if (!existing) throw notFound(`Coupon ${body.couponId} not found in this program`);
    throw badRequest(`maxRedemptions (${body.maxRedemptions}) cannot be below timesRedeemed (${existing.timesRedeemed})`);
  }
  return toCoupon(updated, codes);
}
