import type { PromotionalCode } from '@affiliate/contracts';
import { notFound, type PageRequest, type Period } from '@affiliate/platform';
import type { CouponRepositories } from '../data-access/repositories';
import type { PromotionalCodeLookup, PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { toPromotionalCode } from '../data-access/representations';
import { describeLookup } from './describe-lookup';

export const isSingleCodeLookup = (lookup: PromotionalCodeLookup): boolean =>
  lookup.id !== undefined || lookup.code !== undefined || lookup.externalId !== undefined;

async function withCoupons(
  repositories: CouponRepositories,
  programId: string,
  codes: PromotionalCodeRecord[],
): Promise<PromotionalCode[]> {
  const coupons = new Map(
    (
      await repositories.coupons.byIds(
        programId,
        codes.map((code) => code.couponId),
      )
    ).map((coupon) => [coupon._id, coupon]),
  );
  // A code whose coupon is mid-deletion is already on its way out: it is not listed.
  return codes.flatMap((code) => {
    const coupon = coupons.get(code.couponId);
    return coupon ? [toPromotionalCode(code, coupon)] : [];
  });
}

export async function findPromotionalCode(
  repositories: CouponRepositories,
  programId: string,
  lookup: PromotionalCodeLookup,
): Promise<PromotionalCode> {
  const code = await repositories.promotionalCodes.lookUp(programId, lookup);
  const [found] = code ? await withCoupons(repositories, programId, [code]) : [];
  if (!found) {
    throw notFound(`No promotional code with ${describeLookup(lookup)} in this program`);
  }
  return found;
}

export async function listPromotionalCodes(
  repositories: CouponRepositories,
  programId: string,
  lookup: PromotionalCodeLookup,
  createdAt: Period | undefined,
  page: PageRequest,
): Promise<{ promotionalCodes: PromotionalCode[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.promotionalCodes.list(programId, lookup, page, createdAt);
  return { promotionalCodes: await withCoupons(repositories, programId, items), nextCursor };
}
