import type { Redemption, RedeemPromotionalCodeBody } from '@affiliate/contracts';
import { badRequest, conflict } from '@affiliate/platform';
import type { CouponRecord } from '../data-access/coupon-model';
import type { CouponRepositories } from '../data-access/repositories';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';
import { redemptionIdOf, type RedemptionRecord } from '../data-access/redemption-model';
import { checkRedeemable } from './check-redeemable';

/** A pending claim older than this belongs to a process that died mid-count; it is taken over. */
export const STALE_CLAIM_MS = 60_000;

/**
 * A claim to count this redemption (with the code and coupon it was checked against), or the result
 * of one that another request already applied.
 */
type Claim = { claim: RedemptionRecord; code: PromotionalCodeRecord; coupon: CouponRecord } | { replay: Redemption };

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

const inProgress = () => conflict('A redemption with this redemptionKey is in progress; retry', 'concurrent_modification');

/**
 * A key seen before: its stored result when applied, else its pending claim taken over when stale.
 * Null when the key is not (or no longer) claimed.
 */
async function resumeKnown(repositories: CouponRepositories, programId: string, body: RedeemPromotionalCodeBody): Promise<Claim | null> {
  const existing = await repositories.redemptions.byKey(programId, body.redemptionKey);
  if (!existing) return null;
  if (existing.state === 'applied') return { replay: toRedemption(existing) };
  return takeOver(repositories, programId, body, existing);
}

/**
 * Claims first, asks later: nearly every key is new, so the claim is inserted straight away and the
 * key is read only when it was there already (a retry) or when the code is refused (a retry of a
 * redemption applied earlier is answered with its result whatever the code has become since).
 */
async function claimNew(repositories: CouponRepositories, programId: string, body: RedeemPromotionalCodeBody): Promise<Claim> {
  const { code, coupon } = await withCoupon(repositories, programId, await repositories.promotionalCodes.byCode(programId, body.code));
  let affiliateId: string;
  try {
    affiliateId = checkRedeemable(body, code, coupon);
  } catch (refusal) {
    const known = await resumeKnown(repositories, programId, body);
    if (known) return known;
    throw refusal;
  }
  const checked = { code: code as PromotionalCodeRecord, coupon: coupon as CouponRecord };
  const now = new Date();
  const claim: RedemptionRecord = {
    _id: redemptionIdOf(programId, body.redemptionKey),
    programId,
    redemptionKey: body.redemptionKey,
    state: 'pending',
    promotionalCodeId: checked.code._id,
    couponId: checked.coupon._id,
    affiliateId,
    code: checked.code.code,
    createdAt: now,
    claimedAt: now,
  };
  if (await repositories.redemptions.claim(claim)) return { claim, ...checked };
  const racing = await resumeKnown(repositories, programId, body);
  if (racing) return racing;
  throw inProgress();
}

async function takeOver(
  repositories: CouponRepositories,
  programId: string,
  body: RedeemPromotionalCodeBody,
  stale: RedemptionRecord,
): Promise<Claim> {
  if (Date.now() - new Date(stale.claimedAt).getTime() < STALE_CLAIM_MS) throw inProgress();
  const { code, coupon } = await withCoupon(
    repositories,
    programId,
    await repositories.promotionalCodes.byId(programId, stale.promotionalCodeId),
  );
  checkRedeemable(body, code, coupon);
  const claimedAt = new Date();
  if (!(await repositories.redemptions.takeOver(stale, claimedAt))) throw inProgress();
  return { claim: { ...stale, claimedAt }, code: code as PromotionalCodeRecord, coupon: coupon as CouponRecord };
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
  const claimed = await claimNew(repositories, programId, body);
  if ('replay' in claimed) return claimed.replay;
  const { claim } = claimed;
  const giveUp = async (message: string): Promise<never> => {
    await repositories.redemptions.dropPending(claim);
    throw badRequest(message, 'promotional_code_not_redeemable', 'code');
  };

  const codeCount = await repositories.promotionalCodes.countRedemption(
    programId,
    claim.promotionalCodeId,
    claim.redemptionKey,
    claimed.code,
  );
  if (codeCount === 'gone') return giveUp(`Promotional code ${claim.code} does not exist in this program`);
  if (codeCount === 'limit reached') return giveUp(`Promotional code ${claim.code} has reached its redemption limit`);

  const couponCount = await repositories.coupons.countRedemption(programId, claim.couponId, claim.redemptionKey, claimed.coupon);
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
