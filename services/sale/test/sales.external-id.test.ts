import { Sale } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { affiliateWithCode, createAffiliate, createReferral, saleWorldOfThisFile, timesRedeemed } from './sale-world';

const worldOf = saleWorldOfThisFile();
const programId = newProgramId();
const sales = () => worldOf().api(worldOf().sale, programId);

test('the same externalId with the same content answers the stored sale with Idempotent-Replayed: true', async () => {
  const { code } = await affiliateWithCode(worldOf(), programId);
  const body = { promoCode: code.code, totalEarned: 100, externalId: 'pay_same_1001' };
  const first = await sales().post('/sales', body).expect(200);
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  const again = await sales().post('/sales', { externalId: 'pay_same_1001', totalEarned: 100.0, promoCode: code.code }).expect(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(Sale.parse(again.body)).toEqual(Sale.parse(first.body));
});

test('the same externalId with another amount, currency or attribution is a 409 naming the existing sale, and records nothing', async () => {
  const { affiliate, code } = await affiliateWithCode(worldOf(), programId);
  const referral = await createReferral(worldOf(), programId, { affiliateId: (await createAffiliate(worldOf(), programId)).id });
  const body = { promoCode: code.code, totalEarned: 100, externalId: 'pay_other_1001' };
  const first = Sale.parse((await sales().post('/sales', body).expect(200)).body);
  const others = [
    { ...body, totalEarned: 555 },
    { ...body, currency: 'EUR' },
    { referralId: referral.id, totalEarned: 100, externalId: 'pay_other_1001' },
  ];
  for (const other of others) {
    const response = await sales().post('/sales', other).expect(409);
    expect(response.body.error).toBe(
      `externalId: pay_other_1001 is already the sale ${first.id}, recorded with another amount, currency or attribution; a new payment needs a new externalId`,
    );
  }
  expect(await timesRedeemed(worldOf(), programId, code)).toEqual({ code: 1, coupon: 1 });
  expect((await sales().get('/sales', { affiliateId: affiliate.id }).expect(200)).body).toHaveLength(1);
  expect((await sales().get('/sales', { referralId: referral.id }).expect(200)).body).toHaveLength(0);
});

test('a sale whose externalId is still being recorded by another request is a 409 with Retry-After, and records nothing', async () => {
  const { affiliate, coupon, code } = await affiliateWithCode(worldOf(), programId);
  const externalId = 'pay_in_flight_1001';
  // Another request holds the code's redemption for this payment right now (a fresh claim, as the coupon service stores it).
  const redemptionKey = `sale:${programId}:${externalId}`;
  const now = new Date();
  await worldOf()
    .coupon.context.connection.collection<{ _id: string } & Record<string, unknown>>('redemptions')
    .insertOne({
      _id: `${programId}:${redemptionKey}`,
      programId,
      redemptionKey,
      state: 'pending',
      promotionalCodeId: code.id,
      couponId: coupon.id,
      affiliateId: affiliate.id,
      code: code.code,
      createdAt: now,
      claimedAt: now,
    });
  const response = await sales().post('/sales', { promoCode: code.code, totalEarned: 100, externalId }).expect(409);
  expect(response.body.error).toContain('being recorded right now');
  expect(response.headers['retry-after']).toBe('1');
  expect((await sales().get('/sales', { affiliateId: affiliate.id }).expect(200)).body).toHaveLength(0);
});
