import { Click, Sale } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { affiliateWithCode, createAffiliate, createReferral, saleEvent, startSaleWorld, type SaleWorld } from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const sales = () => world.api(world.sale, programId);

/** A referral through a click made at `clickedAt` (an imported click, so the age is exact). */
async function referralThroughClick(clickedAt: Date) {
  const affiliate = await createAffiliate(world, programId);
  const clickResponse = await world
    .api(world.affiliate, programId)
    .post('/clicks', { link: affiliate.affiliateLinks[0]!.link, occurredAt: clickedAt.toISOString() })
    .expect(200);
  const click = Click.parse(clickResponse.body);
  const referral = await createReferral(world, programId, { clickId: click.clickId });
  return { affiliate, click, referral };
}

test('a sale by promo code is attributed PROMO_CODE', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const sale = Sale.parse((await sales().post('/sales', { promoCode: code.code, totalEarned: 10 }).expect(200)).body);
  expect(sale.attribution).toEqual({ method: 'PROMO_CODE', clickId: null, clickedAt: null, ageSeconds: null, affiliateId: affiliate.id });
});

test("a sale by referralId is attributed REFERRAL with the referral's click, aged from the click to the payment", async () => {
  const clickedAt = new Date(Date.now() - 5 * 86_400_000);
  const { affiliate, click, referral } = await referralThroughClick(clickedAt);
  const paidAt = new Date(clickedAt.getTime() + 3_600_000);
  const sale = Sale.parse(
    (await sales().post('/sales', { referralId: referral.id, totalEarned: 10, paidAt: paidAt.toISOString() }).expect(200)).body,
  );
  expect(sale.attribution).toEqual({
    method: 'REFERRAL',
    clickId: click.clickId,
    clickedAt: clickedAt.toISOString(),
    ageSeconds: 3600,
    affiliateId: affiliate.id,
  });
  // Subscribers see it in sale.created.
  expect((await saleEvent(world, 'sale.created', sale.id)).data).toMatchObject({ attribution: sale.attribution });
});

test('a sale by customer email is attributed EMAIL through the earlier referral', async () => {
  const clickedAt = new Date(Date.now() - 2 * 86_400_000);
  const { affiliate, click, referral } = await referralThroughClick(clickedAt);
  const paidAt = new Date(clickedAt.getTime() + 60_000);
  const sale = Sale.parse(
    (await sales().post('/sales', { email: referral.email, totalEarned: 10, paidAt: paidAt.toISOString() }).expect(200)).body,
  );
  expect(sale.attribution).toEqual({
    method: 'EMAIL',
    clickId: click.clickId,
    clickedAt: clickedAt.toISOString(),
    ageSeconds: 60,
    affiliateId: affiliate.id,
  });
});

test('a sale through a referral without a click carries no click', async () => {
  const affiliate = await createAffiliate(world, programId);
  const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
  const sale = Sale.parse((await sales().post('/sales', { referralId: referral.id, totalEarned: 10 }).expect(200)).body);
  expect(sale.attribution).toEqual({ method: 'REFERRAL', clickId: null, clickedAt: null, ageSeconds: null, affiliateId: affiliate.id });
});
