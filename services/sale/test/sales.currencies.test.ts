import { Sale } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { createAffiliate, createReferral, saleWorldOfThisFile } from './sale-world';

const worldOf = saleWorldOfThisFile();
const programId = newProgramId();
const sales = () => worldOf().api(worldOf().sale, programId);

async function referralId(): Promise<string> {
  const affiliate = await createAffiliate(worldOf(), programId);
  return (await createReferral(worldOf(), programId, { affiliateId: affiliate.id })).id;
}

test('a currency that is not an active ISO 4217 code is refused and records nothing', async () => {
  const id = await referralId();
  for (const currency of ['XYZ', 'US', 'DOLLAR', '€']) {
    const response = await sales().post('/sales', { referralId: id, totalEarned: 10, currency }).expect(400);
    expect(response.body.error).toBe('currency: must be an active ISO 4217 currency code in upper or lower case, such as USD, EUR or JPY');
  }
  expect((await sales().get('/sales', { referralId: id }).expect(200)).body).toEqual([]);
});

test('a lower-case currency code is stored upper case', async () => {
  const sale = Sale.parse(
    (
      await sales()
        .post('/sales', { referralId: await referralId(), totalEarned: 10, currency: 'eur' })
        .expect(200)
    ).body,
  );
  expect(sale.currency).toBe('EUR');
});

test("amounts follow the currency's minor unit: JPY has none, KWD has three", async () => {
  const id = await referralId();
  const yen = Sale.parse((await sales().post('/sales', { referralId: id, totalEarned: 1000.4, currency: 'JPY' }).expect(200)).body);
  expect(yen.totalEarned).toBe(1000);
  const dinar = Sale.parse((await sales().post('/sales', { referralId: id, totalEarned: 1.2345, currency: 'KWD' }).expect(200)).body);
  expect(dinar.totalEarned).toBe(1.235);
});

test('a FLAT coupon in a currency that is not ISO 4217 is refused', async () => {
  const response = await worldOf()
    .api(worldOf().coupon, programId)
    .post('/coupons', { name: 'flat', couponType: 'FLAT', amountOff: 5, currency: 'ABC' })
    .expect(400);
  expect(response.body.error).toMatch(/^currency: must be an active ISO 4217 currency code/);
});
