import type { PromotionalCode } from '@affiliate/contracts';
import { findPage, notFound, type PageRequest } from '@affiliate/platform';
import type { FilterQuery } from 'mongoose';
import type { CouponModels } from '../data-access/models';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { couponsByIds } from '../data-access/reads';
import { toPromotionalCode } from '../data-access/representations';
import { codeKey, presentExternalIdKey } from '../data-access/unique-keys';
import { describeLookup } from './describe-lookup';

export type PromotionalCodeLookup = {
  id?: string;
  code?: string;
  externalId?: string;
  couponId?: string;
  affiliateId?: string;
  affiliateEmail?: string;
};

/** id, code and externalId name one code; couponId, affiliateId and affiliateEmail name a list. */
export const isSingleCodeLookup = (lookup: PromotionalCodeLookup): boolean =>
  lookup.id !== undefined || lookup.code !== undefined || lookup.externalId !== undefined;

function filterOf(programId: string, lookup: PromotionalCodeLookup): FilterQuery<PromotionalCodeRecord> {
  const filter: FilterQuery<PromotionalCodeRecord> = { programId };
  if (lookup.id !== undefined) filter._id = lookup.id;
  if (lookup.code !== undefined) filter.codeKey = codeKey(lookup.code);
  if (lookup.externalId !== undefined) filter.externalIdKey = presentExternalIdKey(lookup.externalId);
  if (lookup.couponId !== undefined) filter.couponId = lookup.couponId;
  if (lookup.affiliateId !== undefined) filter.affiliateId = lookup.affiliateId;
  if (lookup.affiliateEmail !== undefined) filter.affiliateEmailKey = lookup.affiliateEmail.trim().toLowerCase();
  return filter;
}

async function withCoupons(models: CouponModels, programId: string, codes: PromotionalCodeRecord[]): Promise<PromotionalCode[]> {
  const coupons = await couponsByIds(models, programId, codes.map((code) => code.couponId));
  // A code whose coupon is mid-deletion is already on its way out: it is not listed.
  return codes.flatMap((code) => {
    const coupon = coupons.get(code.couponId);
    return coupon ? [toPromotionalCode(code, coupon)] : [];
  });
}

export async function findPromotionalCode(models: CouponModels, programId: string, lookup: PromotionalCodeLookup): Promise<PromotionalCode> {
  const code = await models.promotionalCodes.findOne(filterOf(programId, lookup)).lean<PromotionalCodeRecord>();
  const [found] = code ? await withCoupons(models, programId, [code]) : [];
  if (!found) {
    throw notFound(`No promotional code with ${describeLookup(lookup)} in this program`);
  }
  return found;
}

export async function listPromotionalCodes(
  models: CouponModels,
  programId: string,
  lookup: PromotionalCodeLookup,
  page: PageRequest,
): Promise<{ promotionalCodes: PromotionalCode[]; nextCursor: string | null }> {
  const { items, nextCursor } = await findPage(models.promotionalCodes, filterOf(programId, lookup), page);
  return { promotionalCodes: await withCoupons(models, programId, items as PromotionalCodeRecord[]), nextCursor };
}
