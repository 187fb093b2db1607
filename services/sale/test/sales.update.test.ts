import { Sale, Statement } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { createAffiliate, createReferral, saleEvent, startSaleWorld, type SaleWorld } from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const sales = () => world.api(world.sale, programId);

async function newSale(totalEarned = 100, commissionRate = 10): Promise<Sale> {
  const affiliate = await createAffiliate(world, programId, { commissionRate });
  const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
  return Sale.parse((await sales().post('/sales', { referralId: referral.id, totalEarned }).expect(200)).body);
}

test('PUT with a new totalEarned or commissionRate recalculates the commission and emits sale.updated', async () => {
  const sale = await newSale(100, 10);
  const recalculated = Sale.parse(
    (await sales().put('/sales', { saleId: sale.id, totalEarned: 19.99, commissionRate: 33.3 }).expect(200)).body,
  );
  expect(recalculated).toMatchObject({ id: sale.id, totalEarned: 19.99, commissionRate: 33.3, commissionEarned: 6.66 });
  expect(recalculated.commissions).toEqual([{ ...sale.commissions[0], amount: 6.66 }]);
  expect(Sale.strict().parse((await saleEvent(world, 'sale.updated', sale.id)).data)).toEqual(recalculated);
  expect(Sale.parse((await sales().get('/sales', { id: sale.id }).expect(200)).body)).toEqual(recalculated);
});

test('PUT with a payoutId marks the commission as in that payout, and sale.updated says so', async () => {
  const sale = await newSale();
  const paid = Sale.parse((await sales().put('/sales', { saleId: sale.id, payoutId: 'po_123' }).expect(200)).body);
  expect(paid.commissions[0]).toMatchObject({ payoutCreated: true, payoutId: 'po_123', amount: sale.commissionEarned });
  const event = await saleEvent(world, 'sale.updated', sale.id);
  expect(Sale.parse(event.data).commissions[0]).toMatchObject({ payoutCreated: true, payoutId: 'po_123' });
});

test('a commission already in a payout cannot be recalculated', async () => {
  const sale = await newSale();
  await sales().put('/sales', { saleId: sale.id, payoutCreated: true, payoutId: 'po_9' }).expect(200);
  const response = await sales().put('/sales', { saleId: sale.id, totalEarned: 5 }).expect(400);
  expect(response.body.error).toBe(`The commission of sale ${sale.id} is already in payout po_9; it cannot be recalculated`);
  const unmarked = Sale.parse((await sales().put('/sales', { saleId: sale.id, payoutCreated: false, totalEarned: 5 }).expect(200)).body);
  expect(unmarked.commissions[0]).toMatchObject({ payoutCreated: false, payoutId: null, amount: 0.5 });
});

test('PUT needs something to change and a consistent payout marking', async () => {
  const sale = await newSale();
  expect((await sales().put('/sales', { saleId: sale.id }).expect(400)).body.error).toBe(
    'Nothing to update: send totalEarned, commissionRate, payoutId or payoutCreated',
  );
  expect((await sales().put('/sales', { saleId: sale.id, payoutCreated: false, payoutId: 'po_1' }).expect(400)).body.error).toMatch(
    /^payoutId: /,
  );
  expect((await sales().put('/sales', { saleId: sale.id, commissionRate: 101 }).expect(400)).body.error).toMatch(/^commissionRate: /);
  expect(
    (await sales().put('/sales', { saleId: '00000000-0000-4000-8000-000000000000', payoutCreated: true }).expect(404)).body.error,
  ).toMatch(/No sale with id/);
});

test('a commission marked paid by hand (PUT /sales with a payoutId from outside the payout runs) is PAID_OUT on the statement, and no longer once unmarked', async () => {
  const from = new Date(Date.now() - 1000).toISOString();
  const sale = await newSale(100, 10);
  const statement = async () =>
    (await sales().get('/affiliates/statement', { affiliateId: sale.affiliateId, currency: sale.currency, from }).expect(200)).body;
  expect(await statement()).toMatchObject({ closingBalance: 10, entries: [expect.objectContaining({ type: 'EARNED', amount: 10 })] });
  await sales().put('/sales', { saleId: sale.id, payoutId: 'po_outside' }).expect(200);
  // In the published shape: the outside payoutId is any string, not a payout run's uuid.
  const paid = Statement.parse(await statement());
  expect(paid.entries.map((entry: { type: string; amount: number }) => [entry.type, entry.amount])).toEqual([
    ['EARNED', 10],
    ['PAID_OUT', -10],
  ]);
  expect(paid.entries[1]).toMatchObject({ saleId: sale.id, commissionId: sale.commissions[0]!.id, payoutId: 'po_outside' });
  expect(paid).toMatchObject({ openingBalance: 0, closingBalance: 0 });
  await sales().put('/sales', { saleId: sale.id, payoutCreated: false }).expect(200);
  expect((await statement()).entries.map((entry: { type: string }) => entry.type)).toEqual(['EARNED']);
});
