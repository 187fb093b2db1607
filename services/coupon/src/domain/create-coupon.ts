import { randomUUID } from 'node:crypto';
import type { Coupon, CreateCouponBody } from '@affiliate/contracts';
import { badRequest, createEvent, fromMinorUnits, toMinorUnits, UniqueKeyConflict } from '@affiliate/platform';
import type { CouponRecord } from '../data-access/coupon-model';
import type { CouponRepositories } from '../data-access/repositories';
import { metadataEntries, toCoupon } from '../data-access/representations';
import { externalIdKey } from '../data-access/unique-keys';
import { refuseUnusableRule } from './generate-promotional-code';

/** Fields of the other discount kind are refused rather than silently stored beside the real one. */
function refuseMismatchedDiscountFields(body: CreateCouponBody): void {
  if (body.couponType === 'PERCENTAGE' && (body.amountOff !== undefined || body.currency !== undefined)) {
    throw badRequest('amountOff and currency are only used when couponType is FLAT', 'parameters_exclusive');
  }
  if (body.couponType === 'FLAT' && body.percentOff !== undefined) {
    throw badRequest('percentOff is only used when couponType is PERCENTAGE', 'parameters_exclusive', 'percentOff');
  }
  if (body.duration !== 'repeating' && body.durationInMonths !== undefined) {
    throw badRequest('durationInMonths is only used when duration is repeating', 'parameters_exclusive', 'durationInMonths');
  }
}

export async function createCoupon(repositories: CouponRepositories, programId: string, body: CreateCouponBody): Promise<Coupon> {
  refuseMismatchedDiscountFields(body);
  const id = randomUUID();
  const now = new Date();
  const externalId = body.externalId ?? null;
  const coupon: CouponRecord = {
    _id: id,
    programId,
    name: body.name,
    externalId,
    externalIdKey: externalIdKey(programId, id, externalId),
    couponType: body.couponType,
    percentOff: body.couponType === 'PERCENTAGE' ? (body.percentOff ?? null) : null,
    amountOffMinor:
      body.couponType === 'FLAT' && body.amountOff !== undefined && body.currency ? flatAmountOff(body.amountOff, body.currency) : null,
    currency: body.couponType === 'FLAT' ? (body.currency ?? null) : null,
    duration: body.duration,
    durationInMonths: body.duration === 'repeating' ? (body.durationInMonths ?? null) : null,
    maxRedemptions: body.maxRedemptions ?? null,
    timesRedeemed: 0,
    couponCategory: body.couponCategory,
    limitToProducts: body.limitToProducts,
    productIds: body.productIds,
    collectionIds: body.collectionIds,
    valid: body.valid,
    redeemBy: body.redeemBy ? new Date(body.redeemBy) : null,
    integrationType: body.integrationType,
    metadata: metadataEntries(body.metadata ?? {}),
    autoCouponRule: body.autoCouponRule ?? null,
    autoCouponRuleSetAt: body.autoCouponRule ? now : null,
    autoCouponRuleProgress: body.autoCouponRule?.appliesTo === 'ALL_AFFILIATES' ? { issued: 0, done: false } : null,
    createdAt: now,
    updatedAt: now,
  };
  refuseUnusableRule(coupon.autoCouponRule, coupon);
  const representation = toCoupon(coupon, []);
  if (coupon.autoCouponRule) await repositories.autoCouponRules.add(programId, id);
  try {
    await repositories.coupons.insert(coupon, () => [createEvent('coupon.created', programId, representation)]);
  } catch (error) {
    if (error instanceof UniqueKeyConflict)
      throw badRequest(`A coupon with externalId "${externalId}" already exists in this program`, 'external_id_taken', 'externalId');
    throw error;
  }
  return representation;
}

/** A flat discount in minor units; one that rounds to nothing (0.001 USD, 1e-320) is refused, not stored as 0. */
function flatAmountOff(amountOff: number, currency: string): number {
  const units = toMinorUnits(amountOff, currency);
  if (units <= 0)
    throw badRequest(
      `amountOff: ${amountOff} ${currency} is less than the smallest unit of ${currency} (${fromMinorUnits(1, currency)})`,
      'parameter_invalid',
      'amountOff',
    );
  return units;
}
