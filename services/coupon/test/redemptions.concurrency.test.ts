import { randomUUID } from 'node:crypto';
import { newProgramId, percentCoupon, redeemableCode, startCouponService, type Harness } from './coupon-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(async () => {
  await harness.stop();
});

const redeemAll = (programId: string, codes: string[]) =>
  Promise.all(
    Array.from({ length: 50 }, (_, index) =>
      harness
        .api(programId)
        .post('/internal/redemptions', { code: codes[index % codes.length], redemptionKey: randomUUID(), totalEarned: 10 }),
    ),
  );

test('50 parallel redemptions of a code with maxRedemptions 10: exactly 10 succeed and both counters read 10', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { maxRedemptions: 10 });
  const responses = await redeemAll(programId, [code.code]);
  expect(responses.filter((response) => response.status === 200)).toHaveLength(10);
  expect(responses.filter((response) => response.status === 400)).toHaveLength(40);
  const api = harness.api(programId);
  expect((await api.get('/promotional-codes', { id: code.promotionalCodeId })).body.timesRedeemed).toBe(10);
  expect((await api.get('/coupons', { id: code.couponId })).body.timesRedeemed).toBe(10);
});

test('50 parallel redemptions across 3 codes of a coupon with maxRedemptions 10: exactly 10 succeed and the counters add up to 10', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await harness.createAffiliate(programId);
  const coupon = await api.post('/coupons', { ...percentCoupon, maxRedemptions: 10 }).expect(200);
  const codes: string[] = [];
  for (const suffix of ['A', 'B', 'C']) {
    codes.push(
      (await api.post('/promotional-codes', { couponId: coupon.body.id, code: `RACE-${suffix}`, affiliateId: affiliate.id }).expect(200))
        .body.code,
    );
  }
  const responses = await redeemAll(programId, codes);
  expect(responses.filter((response) => response.status === 200)).toHaveLength(10);
  expect(responses.filter((response) => response.status === 400)).toHaveLength(40);
  const stored = (await api.get('/coupons', { id: coupon.body.id })).body;
  expect(stored.timesRedeemed).toBe(10);
  expect(stored.promotionalCodes.reduce((sum: number, code: { timesRedeemed: number }) => sum + code.timesRedeemed, 0)).toBe(10);
});
