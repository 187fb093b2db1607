import { Sale } from '@affiliate/contracts';
import { eventually, newProgramId } from '@affiliate/platform/testing';
import { affiliateWithCode, createAffiliate, createReferral, saleEvent, startSaleWorld, timesRedeemed, type SaleWorld } from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const sales = () => world.api(world.sale, programId);
const createdEventsOf = (saleId: string) => world.saleEvents.filter((event) => event.type === 'sale.created' && event.data.id === saleId);

test('repeating a promo-code sale with the same externalId returns the same sale, redeemed and commissioned once', async () => {
  const { code } = await affiliateWithCode(world, programId);
  const body = { promoCode: code.code, totalEarned: 80, externalId: 'pi_repeat_1' };
  const first = Sale.parse((await sales().post('/sales', body).expect(200)).body);
  const again = Sale.parse((await sales().post('/sales', body).expect(200)).body);
  expect(again).toEqual(first);
  expect(first.externalId).toBe('pi_repeat_1');
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 1, coupon: 1 });
  await saleEvent(world, 'sale.created', first.id);
  expect((await sales().get('/sales', { affiliateId: first.affiliateId }).expect(200)).body).toHaveLength(1);
});

test('repeating a referral sale with the same externalId returns the same sale', async () => {
  const affiliate = await createAffiliate(world, programId);
  const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
  const body = { referralId: referral.id, totalEarned: 30, externalId: 'pi_repeat_2' };
  const first = Sale.parse((await sales().post('/sales', body).expect(200)).body);
  expect(Sale.parse((await sales().post('/sales', body).expect(200)).body)).toEqual(first);
  expect((await sales().get('/sales', { referralId: referral.id }).expect(200)).body).toHaveLength(1);
});

test('simultaneous retries of one payment record one sale, count one redemption and emit one sale.created', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const body = { promoCode: code.code, totalEarned: 15, externalId: 'pi_simultaneous' };
  const responses = await Promise.all(Array.from({ length: 10 }, () => sales().post('/sales', body)));
  expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
  const ids = new Set(responses.map((response) => Sale.parse(response.body).id));
  expect(ids.size).toBe(1);
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 1, coupon: 1 });
  expect((await sales().get('/sales', { affiliateId: affiliate.id }).expect(200)).body).toHaveLength(1);
  const [saleId] = [...ids];
  await saleEvent(world, 'sale.created', saleId!);
  expect(createdEventsOf(saleId!)).toHaveLength(1);
});

test('an externalId belongs to one program only', async () => {
  const other = newProgramId();
  const mine = await affiliateWithCode(world, programId);
  const theirs = await affiliateWithCode(world, other);
  const here = Sale.parse(
    (await sales().post('/sales', { promoCode: mine.code.code, totalEarned: 5, externalId: 'pi_shared' }).expect(200)).body,
  );
  const there = Sale.parse(
    (
      await world
        .api(world.sale, other)
        .post('/sales', { promoCode: theirs.code.code, totalEarned: 5, externalId: 'pi_shared' })
        .expect(200)
    ).body,
  );
  expect(there.id).not.toBe(here.id);
  expect(await timesRedeemed(world, other, theirs.code)).toEqual({ code: 1, coupon: 1 });
});

test('DELETE reverses a sale: gone from reads, sale.deleted with only the id, counters unchanged', async () => {
  const { code } = await affiliateWithCode(world, programId);
  const sale = Sale.parse((await sales().post('/sales', { promoCode: code.code, totalEarned: 20 }).expect(200)).body);
  expect((await sales().delete('/sales', { saleId: sale.id }).expect(200)).body).toEqual({ id: sale.id, deleted: true });
  await sales().get('/sales', { id: sale.id }).expect(404);
  expect((await sales().get('/sales', { affiliateId: sale.affiliateId }).expect(200)).body).toEqual([]);
  expect((await saleEvent(world, 'sale.deleted', sale.id)).data).toEqual({ id: sale.id });
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 1, coupon: 1 });
  await sales().delete('/sales', { saleId: sale.id }).expect(404);
  await sales().put('/sales', { saleId: sale.id, payoutCreated: true }).expect(404);
});

test('a reversed payment cannot be recorded again by a late retry of its externalId', async () => {
  const { code } = await affiliateWithCode(world, programId);
  const body = { promoCode: code.code, totalEarned: 20, externalId: 'pi_refunded' };
  const sale = Sale.parse((await sales().post('/sales', body).expect(200)).body);
  await sales().delete('/sales', { saleId: sale.id }).expect(200);
  const retry = await sales().post('/sales', body).expect(400);
  expect(retry.body.error).toBe(
    'externalId: the sale with externalId pi_refunded was reversed; a reversed payment cannot be recorded again',
  );
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 1, coupon: 1 });
  await eventually(() => expect(createdEventsOf(sale.id)).toHaveLength(1));
});
