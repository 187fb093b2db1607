import { createEvent, notFound } from '@affiliate/platform';
import type { CouponModels } from '../data-access/models';
import { codesOfCoupon } from '../data-access/reads';
import { tombstoneCoupon, tombstonePromotionalCode } from '../data-access/tombstones';

export type DeletedCoupon = { message: string; deletedCoupon: { id: string; name: string | null } };

async function deleteCodesOf(models: CouponModels, programId: string, couponId: string): Promise<void> {
  for (const code of await codesOfCoupon(models, programId, couponId)) {
    await tombstonePromotionalCode(models, programId, code._id, (current) => [createEvent('promocode.deleted', programId, { id: current._id })]);
  }
}

/**
 * Cascades without a transaction: codes first, so a crash midway leaves a coupon that a repeated
 * DELETE finishes; then the coupon; then a second sweep for a code created while this ran.
 */
export async function deleteCoupon(models: CouponModels, programId: string, couponId: string): Promise<DeletedCoupon> {
  const existing = await models.coupons.exists({ programId, _id: couponId });
  if (!existing) throw notFound(`Coupon ${couponId} not found in this program`);
  await deleteCodesOf(models, programId, couponId);
  const deleted = await tombstoneCoupon(models, programId, couponId, (current) => [createEvent('coupon.deleted', programId, { id: current._id })]);
  if (!deleted) throw notFound(`Coupon ${couponId} not found in this program`);
  await deleteCodesOf(models, programId, couponId);
  return { message: 'Coupon deleted successfully', deletedCoupon: { id: deleted._id, name: deleted.name ?? null } };
}
