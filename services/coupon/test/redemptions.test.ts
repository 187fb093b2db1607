import { Redemption } from '@affiliate/contracts';
import { randomUUID } from 'node:crypto';
import { newProgramId, redeemableCode, startCouponService, type Harness } from './coupon-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(async () => {
  await harness.stop();
});

const sale = (code: string, fields: Record<string, unknown> = {}) => ({ code, redemptionKey: randomUUID(), totalEarned: 100, ...fields });

async function counters(programId: string, couponId: string, promotionalCodeId: string) {
  const api = harness.api(programId);
  const coupon = await api.get('/coupons', { id: couponId }).expect(200);
  const code = await api.get('/promotional-codes', { id: promotionalCodeId }).expect(200);
  return { coupon: coupon.body.timesRedeemed as number, code: code.body.timesRedeemed as number };
}

async function expectRejected(programId: string, body: Record<string, unknown>, message: string | RegExp) {
  const response = await harness.api(programId).post('/internal/redemptions', body);
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ error: typeof message === 'string' ? message : expect.stringMatching(message) });
}

test('redeems a code (any case) and adds exactly one to timesRedeemed on the code and on the coupon', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId);
  const response = await harness.api(programId).post('/internal/redemptions', sale(code.code.toLowerCase()));
  expect(response.status).toBe(200);
  expect(Redemption.parse(response.body)).toMatchObject({
    promotionalCodeId: code.promotionalCodeId,
    couponId: code.couponId,
    affiliateId: code.affiliateId,
    code: code.code,
  });
  expect(await counters(programId, code.couponId, code.promotionalCodeId)).toEqual({ coupon: 1, code: 1 });
});

test('applies a redemption identified by the same key once, however often it is retried', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId);
  const body = sale(code.code);
  const first = await harness.api(programId).post('/internal/redemptions', body).expect(200);
  const retries = await Promise.all([1, 2, 3].map(() => harness.api(programId).post('/internal/redemptions', body)));
  for (const retry of retries) expect([200, 409]).toContain(retry.status);
  expect((await harness.api(programId).post('/internal/redemptions', body)).body).toEqual(first.body);
  expect(await counters(programId, code.couponId, code.promotionalCodeId)).toEqual({ coupon: 1, code: 1 });
});

test('a release gives both counts back once, and the same key may redeem again afterwards', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const code = await redeemableCode(harness, programId);
  const body = sale(code.code);
  await api.post('/internal/redemptions', body).expect(200);
  expect((await api.post('/internal/redemptions/release', { redemptionKey: body.redemptionKey })).body).toEqual({
    redemptionKey: body.redemptionKey,
    released: true,
  });
  expect((await api.post('/internal/redemptions/release', { redemptionKey: body.redemptionKey })).body).toEqual({
    redemptionKey: body.redemptionKey,
    released: false,
  });
  expect(await counters(programId, code.couponId, code.promotionalCodeId)).toEqual({ coupon: 0, code: 0 });
  await api.post('/internal/redemptions', body).expect(200);
  expect(await counters(programId, code.couponId, code.promotionalCodeId)).toEqual({ coupon: 1, code: 1 });
});

test('rejects a code that does not exist in the program', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId);
  await expectRejected(programId, sale('NOSUCHCODE'), 'Promotional code NOSUCHCODE does not exist in this program');
  await expectRejected(newProgramId(), sale(code.code), `Promotional code ${code.code} does not exist in this program`);
});

test('rejects a code that is not active', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { active: false });
  await expectRejected(programId, sale(code.code), `Promotional code ${code.code} is not active`);
});

test('rejects an expired code', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { expiresAt: '2020-01-01T00:00:00Z' });
  await expectRejected(programId, sale(code.code), `Promotional code ${code.code} has expired`);
});

test('rejects a code without an assigned affiliate', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId);
  await harness.api(programId).put('/promotional-codes', { promotionalCodeId: code.promotionalCodeId, affiliateId: null }).expect(200);
  await expectRejected(
    programId,
    sale(code.code),
    `Promotional code ${code.code} has no assigned affiliate, so it cannot attribute a sale`,
  );
});

test('rejects a code whose coupon is not valid', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, { valid: false });
  await expectRejected(programId, sale(code.code), `The coupon of promotional code ${code.code} is not valid`);
});

test('rejects a code whose coupon is past its redeemBy', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, { redeemBy: '2020-01-01T00:00:00Z' });
  await expectRejected(programId, sale(code.code), /could only be redeemed until 2020-01-01T00:00:00.000Z$/);
});

test('rejects a code that has reached its own redemption limit', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { maxRedemptions: 1 });
  await harness.api(programId).post('/internal/redemptions', sale(code.code)).expect(200);
  await expectRejected(programId, sale(code.code), `Promotional code ${code.code} has reached its redemption limit`);
  expect(await counters(programId, code.couponId, code.promotionalCodeId)).toEqual({ coupon: 1, code: 1 });
});

test("rejects a code whose coupon has reached its limit, giving the code's increment back", async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, { maxRedemptions: 1 });
  await harness.api(programId).post('/internal/redemptions', sale(code.code)).expect(200);
  await expectRejected(programId, sale(code.code), `The coupon of promotional code ${code.code} has reached its redemption limit`);
  expect(await counters(programId, code.couponId, code.promotionalCodeId)).toEqual({ coupon: 1, code: 1 });
});

test('rejects a sale below the minimum amount or in another currency', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { minimumAmount: 50, minimumAmountCurrency: 'USD' });
  await expectRejected(
    programId,
    sale(code.code, { totalEarned: 49.99 }),
    `Promotional code ${code.code} requires a minimum order of 50 USD`,
  );
  await expectRejected(programId, sale(code.code, { currency: 'EUR' }), /requires an order in USD; the sale is in EUR$/);
  await harness
    .api(programId)
    .post('/internal/redemptions', sale(code.code, { totalEarned: 50, currency: 'usd' }))
    .expect(200);
});

test("rejects a first-time-order code for a customer's repeat order", async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { firstTimeOrder: true });
  await expectRejected(
    programId,
    sale(code.code, { firstTimeOrder: false }),
    `Promotional code ${code.code} is limited to a customer's first order`,
  );
  await harness
    .api(programId)
    .post('/internal/redemptions', sale(code.code, { firstTimeOrder: true }))
    .expect(200);
});

test('rejects a code limited to a customer for anyone else', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { limitToCustomers: true, customerId: 'cus_1' });
  await expectRejected(programId, sale(code.code, { customerId: 'cus_2' }), `Promotional code ${code.code} is limited to another customer`);
  await harness
    .api(programId)
    .post('/internal/redemptions', sale(code.code, { customerId: 'cus_1' }))
    .expect(200);
});

test('rejects a code limited to its affiliate for a sale of another affiliate', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {}, { limitToAffiliate: true });
  await expectRejected(
    programId,
    sale(code.code, { affiliateId: randomUUID() }),
    `Promotional code ${code.code} may only be redeemed for its assigned affiliate`,
  );
  await harness
    .api(programId)
    .post('/internal/redemptions', sale(code.code, { affiliateId: code.affiliateId }))
    .expect(200);
});

test('rejects a product-limited coupon for a sale without any of its products', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, { limitToProducts: true, productIds: ['prod_a'] });
  await expectRejected(programId, sale(code.code, { productIds: ['prod_b'] }), /applies only to specific products/);
  await harness
    .api(programId)
    .post('/internal/redemptions', sale(code.code, { productIds: ['prod_b', 'prod_a'] }))
    .expect(200);
});

test('rejects a FLAT coupon for a sale in another currency', async () => {
  const programId = newProgramId();
  const code = await redeemableCode(harness, programId, {
    name: 'Flat',
    couponType: 'FLAT',
    amountOff: 5,
    currency: 'USD',
    percentOff: undefined,
  });
  await expectRejected(
    programId,
    sale(code.code, { currency: 'GBP' }),
    `The coupon of promotional code ${code.code} is in USD; the sale is in GBP`,
  );
});
