import type { CouponRepositories } from '../data-access/repositories';
import { STALE_CLAIM_MS } from './redeem-promotional-code';

/** Claims given back by one sweep at most; the next sweep takes the rest. */
const SWEEP_LIMIT = 500;

/**
 * Redemptions whose counting stopped half-way: the process counting them died between the code's
 * count and the coupon's, or before marking them applied, and no retry of their sale came after
 * STALE_CLAIM_MS to take them over. No sale was stored for them (the sale service stores one only
 * once its redemption is answered, and a claim is answered after it is applied), so each is given
 * back: what its key counted on the code and on the coupon is taken back (each only if this key
 * counted there), then the claim goes, and a later retry of the sale counts afresh. Each claim is
 * taken over first (at that moment), conditionally on when it was taken, so of this sweep and a retry
 * taking it over at the same moment only one goes on; the claim goes only while still held as the
 * sweep took it. Answers how many were given back.
 *
 * "Pending for STALE_CLAIM_MS means its process died" rests on the sale service giving up on a
 * redemption call long before (UPSTREAM_TIMEOUT_MS, 8 s by default): a counter that is alive but
 * stalled past a minute is not fenced off, and its late writes could leave a counter one off.
 */
export async function giveBackStaleRedemptions(repositories: CouponRepositories, now = new Date()): Promise<number> {
  const stale = await repositories.redemptions.pendingAcrossProgramsBefore(new Date(now.getTime() - STALE_CLAIM_MS), SWEEP_LIMIT);
  let given = 0;
  for (const claim of stale) {
    const takenAt = new Date();
    if (!(await repositories.redemptions.takeOver(claim, takenAt))) continue;
    await repositories.promotionalCodes.uncountRedemption(claim.programId, claim.promotionalCodeId, claim.redemptionKey);
    await repositories.coupons.uncountRedemption(claim.programId, claim.couponId, claim.redemptionKey);
    await repositories.redemptions.dropPendingHeldSince(claim, takenAt);
    given += 1;
  }
  return given;
}
