import { randomUUID } from 'node:crypto';
import type { Redemption, RedeemPromotionalCodeBody } from '@affiliate/contracts';
import { badRequest, conflict, isDuplicateKey } from '@affiliate/platform';
import type { CouponRecord } from '../data-access/coupon-model';
import type { CouponModels } from '../data-access/models';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { countRedemption, forgetRedemptionKey, uncountRedemption } from '../data-access/redemption-counters';
import type { RedemptionRecord } from '../data-access/redemption-model';
import { findCouponRecord } from '../data-access/reads';
import { codeKey } from '../data-access/unique-keys';
import { checkRedeemable } from './check-redeemable';

/** A pending claim older than this belongs to a process that died mid-count; it is taken over. */
export const STALE_CLAIM_MS = 60_000;

/** A claim to count this redemption, or the result of one that another request already applied. */
type Claim = { claim: RedemptionRecord } | { replay: Redemption };

const toRedemption = (record: RedemptionRecord): Redemption => ({
  redemptionKey: record.redemptionKey,
  promotionalCodeId: record.promotionalCodeId,
  couponId: record.couponId,
  affiliateId: record.affiliateId,
  code: record.code,
});

async function loadCodeAndCoupon(models: CouponModels, programId: string, filter: Record<string, unknown>) {
  const code = await models.promotionalCodes.findOne({ programId, ...filter }).lean<PromotionalCodeRecord>();
  const coupon = code ? await findCouponRecord(models, programId, code.couponId) : null;
  return { code, coupon };
}

async function claimNew(models: CouponModels, programId: string, body: RedeemPromotionalCodeBody): Promise<Claim> {
  const { code, coupon } = await loadCodeAndCoupon(models, programId, { codeKey: codeKey(body.code) });
  const affiliateId = checkRedeemable(body, code, coupon);
  const now = new Date();
  const claim: RedemptionRecord = {
    _id: randomUUID(),
    programId,
    redemptionKey: body.redemptionKey,
    state: 'pending',
    promotionalCodeId: (code as PromotionalCodeRecord)._id,
    couponId: (coupon as CouponRecord)._id,
    affiliateId,
    code: (code as PromotionalCodeRecord).code,
    createdAt: now,
    claimedAt: now,
  };
  try {
    await models.redemptions.create(claim);
    return { claim };
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
  }
  const racing = await models.redemptions.findOne({ programId, redemptionKey: body.redemptionKey }).lean<RedemptionRecord>();
  if (racing?.state === 'applied') return { replay: toRedemption(racing) };
  throw conflict('A redemption with this redemptionKey is in progress; retry');
}

async function takeOver(models: CouponModels, programId: string, body: RedeemPromotionalCodeBody, stale: RedemptionRecord): Promise<Claim> {
  if (Date.now() - new Date(stale.claimedAt).getTime() < STALE_CLAIM_MS) {
    throw conflict('A redemption with this redemptionKey is in progress; retry');
  }
  const { code, coupon } = await loadCodeAndCoupon(models, programId, { _id: stale.promotionalCodeId });
  checkRedeemable(body, code, coupon);
  const claimedAt = new Date();
  const taken = await models.redemptions.updateOne({ _id: stale._id, state: 'pending', claimedAt: stale.claimedAt }, { $set: { claimedAt } });
  if (taken.modifiedCount !== 1) throw conflict('A redemption with this redemptionKey is in progress; retry');
  return { claim: { ...stale, claimedAt } };
}

/**
 * Redeems a code for one sale (internal, used by the sale service). The sale's key makes it
 * idempotent: an applied key returns the stored result. Counting is code first, then coupon, each
 * a conditional single-document increment; if the coupon is full, the code's increment is given
 * back. No events: like Stripe, redemption counters change without promocode/coupon.updated.
 */
export async function redeemPromotionalCode(models: CouponModels, programId: string, body: RedeemPromotionalCodeBody): Promise<Redemption> {
  const existing = await models.redemptions.findOne({ programId, redemptionKey: body.redemptionKey }).lean<RedemptionRecord>();
  if (existing?.state === 'applied') return toRedemption(existing);
  const claimed = existing ? await takeOver(models, programId, body, existing) : await claimNew(models, programId, body);
  if ('replay' in claimed) return claimed.replay;
  const { claim } = claimed;
  const giveUp = async (message: string): Promise<never> => {
    await models.redemptions.deleteOne({ _id: claim._id, state: 'pending' });
    throw badRequest(message);
  };

  const codeCount = await countRedemption(models, 'promotionalCodes', programId, claim.promotionalCodeId, claim.redemptionKey);
  if (codeCount === 'gone') return giveUp(`Promotional code ${claim.code} does not exist in this program`);
  if (codeCount === 'limit reached') return giveUp(`Promotional code ${claim.code} has reached its redemption limit`);

  const couponCount = await countRedemption(models, 'coupons', programId, claim.couponId, claim.redemptionKey);
  if (couponCount !== 'counted') {
    await uncountRedemption(models, 'promotionalCodes', programId, claim.promotionalCodeId, claim.redemptionKey);
    return giveUp(
      couponCount === 'gone'
        ? `Promotional code ${claim.code} does not exist in this program`
        : `The coupon of promotional code ${claim.code} has reached its redemption limit`,
    );
  }

  await models.redemptions.updateOne({ _id: claim._id, state: 'pending' }, { $set: { state: 'applied' } });
  await forgetRedemptionKey(models, programId, claim, claim.redemptionKey);
  return toRedemption(claim);
}
