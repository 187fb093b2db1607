import type { PromotionalCode, UpdatePromotionalCodeBody } from '@affiliate/contracts';
import { badRequest, createEvent, notFound, toMinorUnits, UniqueKeyConflict } from '@affiliate/platform';
import type { AffiliateSummary } from '@affiliate/contracts';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { minimumAmountOf, toPromotionalCode } from '../data-access/representations';
import { externalIdKey } from '../data-access/unique-keys';
import type { PromotionalCodeDeps } from './create-promotional-code';
import { resolveAffiliate } from './resolve-affiliate';
import { unassignIfDeparted } from './unassign-departed-affiliate';

function assignment(affiliate: AffiliateSummary | null): Partial<PromotionalCodeRecord> {
  return {
    affiliateId: affiliate?.id ?? null,
    affiliate,
    affiliateEmailKey: affiliate ? affiliate.email.toLowerCase() : null,
    affiliateUpdatedAt: null,
  };
}

function changedFields(body: UpdatePromotionalCodeBody, programId: string, current: PromotionalCodeRecord): Partial<PromotionalCodeRecord> {
  const set: Partial<PromotionalCodeRecord> = { updatedAt: new Date() };
  if (body.active !== undefined) set.active = body.active;
  if (body.expiresAt !== undefined) set.expiresAt = body.expiresAt === null ? null : new Date(body.expiresAt);
  if (body.maxRedemptions !== undefined) set.maxRedemptions = body.maxRedemptions;
  if (body.limitToAffiliate !== undefined) set.limitToAffiliate = body.limitToAffiliate;
  if (body.firstTimeOrder !== undefined) set.firstTimeOrder = body.firstTimeOrder;
  // The minimum is kept in minor units of its currency: a new currency re-expresses the same decimal amount.
  const currency = body.minimumAmountCurrency !== undefined ? body.minimumAmountCurrency : current.minimumAmountCurrency;
  const decimal = body.minimumAmount !== undefined ? body.minimumAmount : minimumAmountOf(current);
  if (body.minimumAmount !== undefined || body.minimumAmountCurrency !== undefined)
    set.minimumAmountMinor = decimal === null || !currency ? null : toMinorUnits(decimal, currency);
  if (body.minimumAmountCurrency !== undefined) set.minimumAmountCurrency = body.minimumAmountCurrency;
  if (body.customerId !== undefined) set.customerId = body.customerId;
  if (body.limitToCustomers !== undefined) set.limitToCustomers = body.limitToCustomers;
  if (body.externalId !== undefined) {
    set.externalId = body.externalId;
    set.externalIdKey = externalIdKey(programId, current._id, body.externalId);
  }
  const next = { ...current, ...set };
  if (next.limitToCustomers && !next.customerId)
    throw badRequest('customerId is required when limitToCustomers is true', 'parameter_missing', 'customerId');
  if (decimal !== null && !currency) {
    throw badRequest('minimumAmountCurrency is required with minimumAmount', 'parameter_missing', 'minimumAmountCurrency');
  }
  return set;
}

/** PUT /promotional-codes: the fields of DESIGN.md §3; `active: false` retires the code. */
export async function updatePromotionalCode(
  { repositories, affiliates }: PromotionalCodeDeps,
  programId: string,
  body: UpdatePromotionalCodeBody,
): Promise<PromotionalCode> {
  const reassigning = body.affiliateId !== undefined || body.affiliateEmail !== undefined;
  const affiliate = reassigning ? await resolveAffiliate(affiliates, programId, body) : null;
  let representation: PromotionalCode | undefined;
  let updated: PromotionalCodeRecord | null;
  try {
    // A new limit guards the write itself: redemptions race past a value read earlier.
    updated = await repositories.promotionalCodes.changeWithinLimit(
      programId,
      body.promotionalCodeId,
      body.maxRedemptions,
      async (current) => {
        if (typeof body.maxRedemptions === 'number' && current.timesRedeemed > body.maxRedemptions) {
          throw badRequest(
            `maxRedemptions (${body.maxRedemptions}) cannot be below timesRedeemed (${current.timesRedeemed})`,
            'parameter_invalid',
            'maxRedemptions',
          );
        }
        const coupon = await repositories.coupons.byId(programId, current.couponId);
        if (!coupon) throw notFound(`Coupon ${current.couponId} not found in this program`);
        return {
          set: { ...changedFields(body, programId, current), ...(reassigning ? assignment(affiliate) : {}) },
          events: (next) => {
            representation = toPromotionalCode(next, coupon);
            return [createEvent('promocode.updated', programId, representation)];
          },
        };
      },
    );
  } catch (error) {
    if (error instanceof UniqueKeyConflict)
      throw badRequest(
        `A promotional code with externalId "${body.externalId}" already exists in this program`,
        'external_id_taken',
        'externalId',
      );
    throw error;
  }
  if (!updated || !representation) throw notFound(`Promotional code ${body.promotionalCodeId} not found in this program`);
  if (affiliate) await unassignIfDeparted(repositories, programId, affiliate.id);
  return representation;
}
