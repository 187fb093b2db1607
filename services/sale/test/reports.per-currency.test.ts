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
