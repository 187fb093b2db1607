import type { Redemption, RedeemPromotionalCodeBody } from '@affiliate/contracts';
import { badRequest, conflict } from '@affiliate/platform';
import type { CouponRecord } from '../data-access/coupon-model';
import type { CouponRepositories } from '../data-access/repositories';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { redemptionIdOf, type RedemptionRecord } from '../data-access/redemption-model';
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

async function withCoupon(repositories: CouponRepositories, programId: string, code: PromotionalCodeRecord | null) {
  const coupon = code ? await repositories.coupons.byId(programId, code.couponId) : null;
  return { code, coupon };
}

async function claimNew(repositories: CouponRepositories, programId: string, body: RedeemPromotionalCodeBody): Promise<Claim> {
  const { code, coupon } = await withCoupon(repositories, programId, await repositories.promotionalCodes.byCode(programId, body.code));
  const affiliateId = checkRedeemable(body, code, coupon);
  const now = new Date();
  const claim: RedemptionRecord = {
    _id: redemptionIdOf(programId, body.redemptionKey),
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
  if (await repositories.redemptions.claim(claim)) return { claim };
  const racing = await repositories.redemptions.byKey(programId, body.redemptionKey);
  if (racing?.state === 'applied') return { replay: toRedemption(racing) };
  throw conflict('A redemption with this redemptionKey is in progress; retry', 'concurrent_modification');
}

async function takeOver(
  repositories: CouponRepositories,
  programId: string,
  body: RedeemPromotionalCodeBody,
  stale: RedemptionRecord,
): Promise<Claim> {
  if (Date.now() - new Date(stale.claimedAt).getTime() < STALE_CLAIM_MS) {
    throw conflict('A redemption with this redemptionKey is in progress; retry', 'concurrent_modification');
  }
  const { code, coupon } = await withCoupon(
    repositories,
    programId,
    await repositories.promotionalCodes.byId(programId, stale.promotionalCodeId),
  );
  checkRedeemable(body, code, coupon);
  const claimedAt = new Date();
  if (!(await repositories.redemptions.takeOver(stale, claimedAt)))
    throw conflict('A redemption with this redemptionKey is in progress; retry', 'concurrent_modification');
  return { claim: { ...stale, claimedAt } };
}

/**
 * Redeems a code for one sale (internal, used by the sale service). The sale's key makes it
 * idempotent: an applied key returns the stored result. Counting is code first, then coupon, each
 * a conditional single-document increment; if the coupon is full, the code's increment is given
 * back. No events: like Stripe, redemption counters change without promocode/coupon.updated.
 */
export async function redeemPromotionalCode(
  repositories: CouponRepositories,
  programId: string,
  body: RedeemPromotionalCodeBody,
): Promise<Redemption> {
  const existing = await repositories.redemptions.byKey(programId, body.redemptionKey);
  if (existing?.state === 'applied') return toRedemption(existing);
  const claimed = existing ? await takeOver(repositories, programId, body, existing) : await claimNew(repositories, programId, body);
  if ('replay' in claimed) return claimed.replay;
  const { claim } = claimed;
  const giveUp = async (message: string): Promise<never> => {
    await repositories.redemptions.dropPending(claim);
    throw badRequest(message, 'promotional_code_not_redeemable', 'code');
  };

  const codeCount = await repositories.promotionalCodes.countRedemption(programId, claim.promotionalCodeId, claim.redemptionKey);
  if (codeCount === 'gone') return giveUp(`Promotional code ${claim.code} does not exist in this program`);
  if (codeCount === 'limit reached') return giveUp(`Promotional code ${claim.code} has reached its redemption limit`);

  const couponCount = await repositories.coupons.countRedemption(programId, claim.couponId, claim.redemptionKey);
  if (couponCount !== 'counted') {
    await repositories.promotionalCodes.uncountRedemption(programId, claim.promotionalCodeId, claim.redemptionKey);
    return giveUp(
      couponCount === 'gone'
        ? `Promotional code ${claim.code} does not exist in this program`
        : `The coupon of promotional code ${claim.code} has reached its redemption limit`,
    );
  }

  await repositories.redemptions.markApplied(claim);
  await Promise.all([
    repositories.promotionalCodes.forgetRedemptionKey(programId, claim.promotionalCodeId, claim.redemptionKey),
    repositories.coupons.forgetRedemptionKey(programId, claim.couponId, claim.redemptionKey),
  ]);
  return toRedemption(claim);
}
