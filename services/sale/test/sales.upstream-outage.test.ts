import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Referral, Sale } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { affiliateWithCode, saleEvent, startSaleWorld, timesRedeemed, type SaleWorld } from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Port 1 is never served on a test machine: a connection there is refused at once, as with a service that is down. */
const DEAD_ADDRESS = 'http://127.0.0.1:1';

/** Nothing was recorded for the affiliate: no sale, no count; then a working sale proves the event stream had nothing before it. */
async function expectNoSideEffects(affiliateId: string, code: Parameters<typeof timesRedeemed>[2]) {
  expect((await world.api(world.sale, programId).get('/sales', { affiliateId }).expect(200)).body).toEqual([]);
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 0, coupon: 0 });
  const marker = Sale.parse(
    (await world.api(world.sale, programId).post('/sales', { promoCode: code.code, totalEarned: 1 }).expect(200)).body,
  );
  await saleEvent(world, 'sale.created', marker.id);
  expect(
    world.saleEvents
      .filter((event) => event.type === 'sale.created' && event.data.affiliateId === affiliateId)
      .map((event) => event.data.id),
  ).toEqual([marker.id]);
}

test('with the coupon service down, a promo-code sale is a 503 and records nothing', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const cut = await world.bootSaleVariant({ couponUrl: DEAD_ADDRESS });
  const response = await world
    .api(cut, programId)
    .post('/sales', { promoCode: code.code, totalEarned: 10, externalId: 'pi_outage' })
    .expect(503);
  expect(response.body).toMatchObject({ error: 'The coupon service is unavailable; retry later' });
  await expectNoSideEffects(affiliate.id, code);
});

test('a coupon service that does not answer in time is a 503 and records nothing', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const hanging = createServer(() => undefined);
  const cut = await world.bootSaleVariant({ couponUrl: await listen(hanging), upstreamTimeoutMs: 300 });
  try {
    const response = await world.api(cut, programId).post('/sales', { promoCode: code.code, totalEarned: 10 }).expect(503);
    expect(response.body).toMatchObject({ error: 'The coupon service is unavailable; retry later' });
  } finally {
    hanging.closeAllConnections();
    hanging.close();
  }
  await expectNoSideEffects(affiliate.id, code);
});

test('a sale that cannot be stored after its redemption gives the redemption back', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const broken = await world.bootSaleVariant({});
  await broken.context.connection.close();
  const response = await world.api(broken, programId).post('/sales', { promoCode: code.code, totalEarned: 10 }).expect(503);
  expect(response.body).toMatchObject({ error: 'The database is unavailable; retry later' });
  await expectNoSideEffects(affiliate.id, code);
});

test('with the referral or affiliate service down, a sale by referral is a 503 and records nothing', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const referral = Referral.parse(
    (await world.api(world.referral, programId).post('/referrals', { affiliateId: affiliate.id, email: 'outage@example.com' }).expect(200))
      .body,
  ).id;
  const noReferrals = await world.bootSaleVariant({ referralUrl: DEAD_ADDRESS });
  expect(
    (await world.api(noReferrals, programId).post('/sales', { referralId: referral, totalEarned: 10 }).expect(503)).body,
  ).toMatchObject({ error: 'The referral service is unavailable; retry later' });
  const noAffiliates = await world.bootSaleVariant({ affiliateUrl: DEAD_ADDRESS });
  expect(
    (await world.api(noAffiliates, programId).post('/sales', { referralId: referral, totalEarned: 10 }).expect(503)).body,
  ).toMatchObject({ error: 'The affiliate service is unavailable; retry later' });
  await expectNoSideEffects(affiliate.id, code);
});

test('with the referral service down, a promo-code sale with a customerId (whose CUSTOMER_OF_ANOTHER_AFFILIATE check asks it) is a 503 and records nothing, its redemption given back', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const noReferrals = await world.bootSaleVariant({ referralUrl: DEAD_ADDRESS });
  const response = await world
    .api(noReferrals, programId)
    .post('/sales', { promoCode: code.code, customerId: 'cus_outage', totalEarned: 10 })
    .expect(503);
  expect(response.body).toMatchObject({ error: 'The referral service is unavailable; retry later' });
  await expectNoSideEffects(affiliate.id, code);
});
