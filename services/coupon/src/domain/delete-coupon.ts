import { createEvent, notFound } from '@affiliate/platform';
import type { CouponRepositories } from '../data-access/repositories';

export type DeletedCoupon = { message: string; deletedCoupon: { id: string; name: string | null } };

async function deleteCodesOf(repositories: CouponRepositories, programId: string, couponId: string): Promise<void> {
  for (const code of await repositories.promotionalCodes.ofCoupon(programId, couponId)) {
    await repositories.promotionalCodes.remove(programId, code._id, (current) => [
      createEvent('promocode.deleted', programId, { id: current._id }),
    ]);
  }
}

/**
 * Cascades without a transaction: codes first, so a crash midway leaves a coupon that a repeated
 * DELETE finishes; then the coupon; then a second sweep for a code created while this ran.
 */
export async function deleteCoupon(repositories: CouponRepositories, programId: string, couponId: string): Promise<DeletedCoupon> {
  const existing = await repositories.coupons.byId(programId, couponId);
  if (!existing) throw notFound(`Coupon ${couponId} not found in this program`);
  await deleteCodesOf(repositories, programId, couponId);
  const deleted = await repositories.coupons.remove(programId, couponId, (current) => [
    createEvent('coupon.deleted', programId, { id: current._id }),
  ]);
  if (!deleted) throw notFound(`Coupon ${couponId} not found in this program`);
  await deleteCodesOf(repositories, programId, couponId);
  return { message: 'Coupon deleted successfully', deletedCoupon: { id: deleted._id, name: deleted.name ?? null } };
}
