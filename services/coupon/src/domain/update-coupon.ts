import type { Coupon, UpdateCouponBody } from '@affiliate/contracts';
import { badRequest, createEvent, notFound, UniqueKeyConflict } from '@affiliate/platform';
import type { CouponRecord } from '../data-access/coupon-model';
import type { CouponRepositories } from '../data-access/repositories';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { metadataEntries, toCoupon } from '../data-access/representations';
import { externalIdKey } from '../data-access/unique-keys';
import { refuseUnusableRule } from './generate-promotional-code';

/** The discount itself never changes after creation, as in Stripe (DESIGN.md §3). */
export const IMMUTABLE_COUPON_FIELDS = ['couponType', 'percentOff', 'amountOff', 'currency', 'duration', 'durationInMonths'] as const;

export function refuseDiscountChange(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const sent = IMMUTABLE_COUPON_FIELDS.filter((field) => Object.prototype.hasOwnProperty.call(body, field));
  if (sent.length > 0) {
    throw badRequest(
      `${sent.join(', ')} cannot be changed: the discount of a coupon is fixed at creation; create a new coupon instead`,
      'parameter_invalid',
      sent[0],
    );
  }
}

function changedFields(body: UpdateCouponBody, programId: string, current: CouponRecord): Partial<CouponRecord> {
  const couponId = current._id;
  const set: Partial<CouponRecord> = { updatedAt: new Date() };
  if (body.name !== undefined) set.name = body.name;
  if (body.valid !== undefined) set.valid = body.valid;
  if (body.redeemBy !== undefined) set.redeemBy = body.redeemBy === null ? null : new Date(body.redeemBy);
  if (body.maxRedemptions !== undefined) set.maxRedemptions = body.maxRedemptions;
  if (body.productIds !== undefined) set.productIds = body.productIds;
  if (body.limitToProducts !== undefined) set.limitToProducts = body.limitToProducts;
  if (body.collectionIds !== undefined) set.collectionIds = body.collectionIds;
  if (body.metadata !== undefined) set.metadata = metadataEntries(body.metadata);
  if (body.autoCouponRule !== undefined) {
    set.autoCouponRule = body.autoCouponRule;
    // NEW_AFFILIATES counts from when the rule was first set: editing its prefix or parts keeps that cut-off
    // (an affiliate waiting for approval since then still gets its code); only a rule set anew or a change of appliesTo moves it.
    const keepsCutOff =
      body.autoCouponRule !== null && current.autoCouponRule != null && current.autoCouponRule.appliesTo === body.autoCouponRule.appliesTo;
    // Setting an ALL_AFFILIATES rule (again) starts a background run (coupon.updated), each issue idempotent by its pair.
    set.autoCouponRuleProgress = body.autoCouponRule?.appliesTo === 'ALL_AFFILIATES' ? { issued: 0, done: false } : null;
    set.autoCouponRuleSetAt = body.autoCouponRule ? (keepsCutOff ? (current.autoCouponRuleSetAt ?? new Date()) : new Date()) : null;
  }
  if (body.externalId !== undefined) {
    set.externalId = body.externalId;
    set.externalIdKey = externalIdKey(programId, couponId, body.externalId);
  }
  return set;
}

export async function updateCoupon(repositories: CouponRepositories, programId: string, body: UpdateCouponBody): Promise<Coupon> {
  let codes: PromotionalCodeRecord[] = [];
  let updated: CouponRecord | null;
  if (body.autoCouponRule) await repositories.autoCouponRules.add(programId, body.couponId);
  try {
    // Redemptions count without touching the revision, so the new limit guards the write itself:
    // it can never land below a count that raced past it.
    updated = await repositories.coupons.changeWithinLimit(programId, body.couponId, body.maxRedemptions, async (current) => {
      if (typeof body.maxRedemptions === 'number' && current.timesRedeemed > body.maxRedemptions) {
        throw badRequest(
          `maxRedemptions (${body.maxRedemptions}) cannot be below timesRedeemed (${current.timesRedeemed})`,
          'parameter_invalid',
          'maxRedemptions',
        );
      }
      const set = changedFields(body, programId, current);
      refuseUnusableRule(set.autoCouponRule === undefined ? current.autoCouponRule : set.autoCouponRule, { ...current, ...set });
      codes = (await repositories.promotionalCodes.ofCoupons(programId, [current])).get(current._id) ?? [];
      return {
        set,
        events: (next) => [createEvent('coupon.updated', programId, toCoupon(next, codes))],
      };
    });
  } catch (error) {
    if (error instanceof UniqueKeyConflict)
      throw badRequest(`A coupon with externalId "${body.externalId}" already exists in this program`, 'external_id_taken', 'externalId');
    throw error;
  }
  if (!updated) throw notFound(`Coupon ${body.couponId} not found in this program`);
  if (body.autoCouponRule === null) await repositories.autoCouponRules.remove(programId, body.couponId);
  return toCoupon(updated, codes);
}
