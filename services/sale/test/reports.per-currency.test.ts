import { AffiliateReportRow } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { parse } from 'csv-parse/sync';
import { createAffiliate, createReferral, saleWorldOfThisFile } from './sale-world';

const worldOf = saleWorldOfThisFile();
const programId = newProgramId();
const sales = () => worldOf().api(worldOf().sale, programId);
const lastDay = () => ({ from: new Date(Date.now() - 86_400_000).toISOString() });

test('GET /reports/affiliates has one row per affiliate and currency, and never adds two currencies together', async () => {
  const seller = await createAffiliate(worldOf(), programId, { commissionRate: 10 });
  const idle = await createAffiliate(worldOf(), programId);
  const referral = await createReferral(worldOf(), programId, { affiliateId: seller.id });
  await sales().post('/sales', { referralId: referral.id, totalEarned: 10, currency: 'USD' }).expect(200);
  await sales().post('/sales', { referralId: referral.id, totalEarned: 49.99, currency: 'EUR' }).expect(200);
  await sales().post('/sales', { referralId: referral.id, totalEarned: 20, currency: 'EUR' }).expect(200);

  const rows = AffiliateReportRow.array().parse((await sales().get('/reports/affiliates', lastDay()).expect(200)).body);
  expect(rows.filter((row) => row.affiliateId === seller.id)).toEqual([
    expect.objectContaining({ currency: 'USD', sales: 1, revenue: 10, commissionEarned: 1, commissionPending: 1 }),
    expect.objectContaining({ currency: 'EUR', sales: 2, revenue: 69.99, commissionEarned: 7, commissionPending: 7 }),
  ]);
  expect(rows.filter((row) => row.affiliateId === idle.id)).toEqual([expect.objectContaining({ currency: 'USD', sales: 0, revenue: 0 })]);

  const csv = await sales().get('/reports/affiliates', lastDay()).set('accept', 'text/csv').expect(200);
  const lines = (parse(csv.text, { columns: true }) as Record<string, string>[]).filter((line) => line.affiliate_id === seller.id);
  expect(lines.map((line) => [line.currency, line.sales, line.revenue])).toEqual([
    ['USD', '1', '10'],
    ['EUR', '2', '69.99'],
  ]);
});

test("GET /reports/affiliates counts a reversed sale's commissions: a paid one stays paid beside its negative adjustment, an unpaid one is voided, as in the statement", async () => {
  const api = sales();
  const affiliate = await createAffiliate(worldOf(), programId, { commissionRate: 10 });
  const referral = await createReferral(worldOf(), programId, { affiliateId: affiliate.id });
  // Paid 40 days ago: past the hold, so DUE and gathered by the payout run.
  const paidAt = new Date(Date.now() - 40 * 86_400_000).toISOString();
  const paidSale = (await api.post('/sales', { referralId: referral.id, totalEarned: 100, currency: 'CHF', paidAt }).expect(200)).body;
  const [payout] = (await api.post('/payouts', { affiliateId: affiliate.id }).expect(200)).body;
  expect(payout).toMatchObject({ amount: 10, currency: 'CHF' });
  await api.put('/payouts', { payoutId: payout.id, status: 'PAID' }).expect(200);
  const openSale = (await api.post('/sales', { referralId: referral.id, totalEarned: 50, currency: 'CHF' }).expect(200)).body;

  await api.delete('/sales', { saleId: paidSale.id }).expect(200);
  await api.delete('/sales', { saleId: openSale.id }).expect(200);

  const rows = AffiliateReportRow.array().parse((await api.get('/reports/affiliates', lastDay()).expect(200)).body);
  expect(rows.filter((row) => row.affiliateId === affiliate.id)).toEqual([
    expect.objectContaining({
      currency: 'CHF',
      sales: 0,
      revenue: 0,
      commissionEarned: 0,
      commissionPending: 0,
      commissionHeld: 0,
      commissionDue: -10,
      commissionPaid: 10,
      commissionVoided: 5,
    }),
  ]);
  const statement = (
    await api.get('/affiliates/statement', { affiliateId: affiliate.id, currency: 'CHF', from: '2000-01-01T00:00:00Z' }).expect(200)
  ).body;
  // What the report says is owed (pending + due) is what the statement says is owed.
  expect(statement.closingBalance).toBe(-10);
});
