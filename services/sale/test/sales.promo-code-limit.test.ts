import { Sale } from '@affiliate/contracts';
import { eventually, newProgramId } from '@affiliate/platform/testing';
import { affiliateWithCode, startSaleWorld, timesRedeemed, type SaleWorld } from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

test('100 simultaneous sales on a code limited to 25 record exactly 25; the other 75 are clear 400s', async () => {
  const programId = newProgramId();
  const { affiliate, code } = await affiliateWithCode(world, programId, { code: { maxRedemptions: 25 } });
  // A loaded machine may shed some with 503 and Retry-After (admission control): a client sends those
  // again, as the system tests' clients do; the rule is about what is recorded and refused.
  const sell = async (index: number) => {
    for (let attempt = 1; ; attempt += 1) {
      const response = await world
        .api(world.sale, programId)
        .post('/sales', { promoCode: code.code, totalEarned: 10 + index, externalId: `burst-${index}` });
      if (response.status !== 503 || attempt >= 20) return response;
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers['retry-after'] ?? 1)));
    }
  };
  const responses = await Promise.all(Array.from({ length: 100 }, (_, index) => sell(index)));
  const accepted = responses.filter((response) => response.status === 200);
  const refused = responses.filter((response) => response.status === 400);
  expect(accepted).toHaveLength(25);
  expect(refused).toHaveLength(75);
  for (const response of refused) expect(response.body.error).toBe(`Promotional code ${code.code} has reached its redemption limit`);

  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 25, coupon: 25 });
  const stored = (await world.api(world.sale, programId).get('/sales', { affiliateId: affiliate.id }).expect(200)).body as Sale[];
  expect(stored.map((sale) => sale.id).sort()).toEqual(accepted.map((response) => Sale.parse(response.body).id).sort());
  await eventually(() =>
    expect(world.saleEvents.filter((event) => event.type === 'sale.created' && event.data.affiliateId === affiliate.id)).toHaveLength(25),
  );
});
