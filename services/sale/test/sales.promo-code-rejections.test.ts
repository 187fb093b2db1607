import type { PromotionalCode } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import {
  affiliateWithCode,
  createCode,
  createCoupon,
  setAffiliateStatus,
  startSaleWorld,
  timesRedeemed,
  type SaleWorld,
} from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const PAST = '2020-01-01T00:00:00.000Z';
const sales = () => world.api(world.sale, programId);

/** A refused sale is a 400 with the reason, records nothing and counts nothing. */
async function expectRefused(body: Record<string, unknown>, reason: RegExp, code?: PromotionalCode) {
  const response = await sales()
    .post('/sales', { totalEarned: 100, ...body })
    .expect(400);
  expect(response.body.error).toMatch(reason);
  if (code) {
    expect(await timesRedeemed(world, programId, code)).toEqual({ code: code.timesRedeemed, coupon: code.coupon.timesRedeemed });
    expect(
      (
        await sales()
          .get('/sales', { affiliateId: code.affiliateId ?? '' })
          .expect(200)
      ).body,
    ).toHaveLength(code.timesRedeemed);
  }
}

test('a code that does not exist in the program is refused', async () => {
  await expectRefused({ promoCode: 'NO-SUCH-CODE' }, /^Promotional code NO-SUCH-CODE does not exist in this program$/);
});

test('a code that is not active is refused', async () => {
  const { code } = await affiliateWithCode(world, programId, { code: { active: false } });
  await expectRefused({ promoCode: code.code }, /is not active/, code);
});

test('an expired code is refused', async () => {
  const { code } = await affiliateWithCode(world, programId, { code: { expiresAt: PAST } });
  await expectRefused({ promoCode: code.code }, /has expired/, code);
});

test('a code without an assigned affiliate is refused', async () => {
  const coupon = await createCoupon(world, programId);
  const code = await createCode(world, programId, { couponId: coupon.id });
  await expectRefused({ promoCode: code.code }, /has no assigned affiliate/, code);
});

test('a code of an invalid coupon is refused', async () => {
  const { code } = await affiliateWithCode(world, programId, { coupon: { valid: false } });
  await expectRefused({ promoCode: code.code }, /coupon .* is not valid/, code);
});

test('a code of a coupon past its redeemBy is refused', async () => {
  const { code } = await affiliateWithCode(world, programId, { coupon: { redeemBy: PAST } });
  await expectRefused({ promoCode: code.code }, /could only be redeemed until/, code);
});

test('a code that reached its own redemption limit is refused', async () => {
  const { code } = await affiliateWithCode(world, programId, { code: { maxRedemptions: 1 } });
  await sales().post('/sales', { promoCode: code.code, totalEarned: 100 }).expect(200);
  await expectRefused({ promoCode: code.code }, /has reached its redemption limit/, {
    ...code,
    timesRedeemed: 1,
    coupon: { ...code.coupon, timesRedeemed: 1 },
  });
});

test('a code whose coupon reached its redemption limit is refused', async () => {
  const { affiliate, coupon, code } = await affiliateWithCode(world, programId, { coupon: { maxRedemptions: 1 } });
  const sibling = await createCode(world, programId, { couponId: coupon.id, affiliateId: affiliate.id });
  await sales().post('/sales', { promoCode: code.code, totalEarned: 100 }).expect(200);
  const response = await sales().post('/sales', { promoCode: sibling.code, totalEarned: 100 }).expect(400);
  expect(response.body.error).toMatch(/coupon .* has reached its redemption limit/);
  expect(await timesRedeemed(world, programId, sibling)).toEqual({ code: 0, coupon: 1 });
});

test("a sale below the code's minimum amount is refused", async () => {
  const { code } = await affiliateWithCode(world, programId, { code: { minimumAmount: 50, minimumAmountCurrency: 'USD' } });
  await expectRefused({ promoCode: code.code, totalEarned: 49.99 }, /minimum order of 50/, code);
});

test('a first-time-order code is refused for a sale not marked as a first order', async () => {
  const { code } = await affiliateWithCode(world, programId, { code: { firstTimeOrder: true } });
  await expectRefused({ promoCode: code.code, firstTimeOrder: false }, /first order/, code);
});

test('a code limited to one customer is refused for another customer', async () => {
  const { code } = await affiliateWithCode(world, programId, { code: { limitToCustomers: true, customerId: 'cus_owner' } });
  await expectRefused({ promoCode: code.code, customerId: 'cus_other' }, /limited to another customer/, code);
});

test('a code of a product-limited coupon is refused for a sale of none of its products', async () => {
  const { code } = await affiliateWithCode(world, programId, { coupon: { limitToProducts: true, productIds: ['prod_a'] } });
  await expectRefused({ promoCode: code.code, productIds: ['prod_b'] }, /applies only to specific products/, code);
});

test('a code of an affiliate that is not ACTIVE earns no sale, and its redemption is given back', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  await setAffiliateStatus(world, programId, affiliate.id, 'PENDING');
  await expectRefused(
    { promoCode: code.code },
    new RegExp(`^Affiliate ${affiliate.id} is PENDING: only ACTIVE affiliates can earn a sale$`),
    code,
  );
});

test('referralId or email sent with promoCode is refused: the affiliate comes from the code', async () => {
  const { code } = await affiliateWithCode(world, programId);
  const message = 'promoCode: referralId and email must not be sent with promoCode: the affiliate comes from the code';
  expect(
    (await sales().post('/sales', { promoCode: code.code, referralId: '00000000-0000-4000-8000-000000000000', totalEarned: 1 }).expect(400))
      .body.error,
  ).toBe(message);
  expect((await sales().post('/sales', { promoCode: code.code, email: 'a@example.com', totalEarned: 1 }).expect(400)).body.error).toBe(
    message,
  );
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 0, coupon: 0 });
});
