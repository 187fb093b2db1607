import { randomUUID } from 'node:crypto';
import { createRepositories, type CouponRepositories } from '../src/data-access/repositories';
import { redemptionIdOf, type RedemptionRecord } from '../src/data-access/redemption-model';
import { giveBackStaleRedemptions } from '../src/domain/give-back-stale-redemptions';
import { STALE_CLAIM_MS } from '../src/domain/redeem-promotional-code';
import { newProgramId, redeemableCode, startCouponService, type Harness } from './coupon-service';

/**
 * The state a coupon process killed half-way through counting a redemption leaves, made exactly: its
 * claim still pending, the code counted, the coupon not (and no sale recorded, since the sale service
 * got no answer). Nothing else finishes it when the sale is never retried.
 */
let harness: Harness;
let repositories: CouponRepositories;
beforeAll(async () => {
  harness = await startCouponService();
  repositories = createRepositories(harness.coupon.context);
});
afterAll(async () => {
  await harness.stop();
});

async function counters(programId: string, code: { couponId: string; promotionalCodeId: string }) {
  const api = harness.api(programId);
  const coupon = await api.get('/coupons', { id: code.couponId }).expect(200);
  const promotionalCode = await api.get('/promotional-codes', { id: code.promotionalCodeId }).expect(200);
  return { coupon: coupon.body.timesRedeemed as number, code: promotionalCode.body.timesRedeemed as number };
}

/** A claim taken at `claimedAt` whose process counted the code and died before the coupon. */
async function halfCounted(programId: string, code: Awaited<ReturnType<typeof redeemableCode>>, claimedAt: Date) {
  const redemptionKey = randomUUID();
  const claim: RedemptionRecord = {
    _id: redemptionIdOf(programId, redemptionKey),
    programId,
    redemptionKey,
    state: 'pending',
    promotionalCodeId: code.promotionalCodeId,
    couponId: code.couponId,
    affiliateId: code.affiliateId,
    code: code.code,
    createdAt: claimedAt,
    claimedAt,
  };
  expect(await repositories.redemptions.claim(claim)).toBe(true);
  expect(await repositories.promotionalCodes.countRedemption(programId, code.promotionalCodeId, redemptionKey)).toBe('counted');
  return redemptionKey;
}

test('a redemption left half-counted by a process that died is given back once its claim is stale: the code and the coupon count the sales recorded again, and its key redeems afresh', async () => {
  const programId = newProgramId();
  const dead = await redeemableCode(harness, programId);
  const live = await redeemableCode(harness, programId);
  const done = await redeemableCode(harness, programId);
  const deadKey = await halfCounted(programId, dead, new Date(Date.now() - STALE_CLAIM_MS - 1_000));
  // Another process is counting this one right now: the sweep leaves it alone.
  await halfCounted(programId, live, new Date());
  // Applied long ago (its sale recorded): never given back, however old its claim.
  const doneKey = await halfCounted(programId, done, new Date(Date.now() - 10 * STALE_CLAIM_MS));
  expect(await repositories.coupons.countRedemption(programId, done.couponId, doneKey)).toBe('counted');
  await repositories.redemptions.markApplied((await repositories.redemptions.byKey(programId, doneKey)) as RedemptionRecord);
  expect(await counters(programId, dead)).toEqual({ code: 1, coupon: 0 });

  // The service sweeps on its own too (once it consumes, then every STALE_CLAIM_MS): whichever gives it back, once.
  await giveBackStaleRedemptions(repositories);
  expect(await counters(programId, dead)).toEqual({ code: 0, coupon: 0 });
  expect(await counters(programId, live)).toEqual({ code: 1, coupon: 0 });
  expect(await counters(programId, done)).toEqual({ code: 1, coupon: 1 });
  expect((await repositories.redemptions.byKey(programId, doneKey))?.state).toBe('applied');
  expect(await repositories.redemptions.byKey(programId, deadKey)).toBeNull();

  // The sale retried later: counted once, on both.
  await harness.api(programId).post('/internal/redemptions', { code: dead.code, redemptionKey: deadKey, totalEarned: 100 }).expect(200);
  expect(await counters(programId, dead)).toEqual({ code: 1, coupon: 1 });
});
