import { newProgramId } from '@affiliate/platform/testing';
import { createAffiliate, createReferral, saleWorldOfThisFile } from './sale-world';

/**
 * GET /payouts and GET /commissions filters: currency, and periods on createdAt and paidAt with
 * exact bounds (gte included, lt excluded). The instants are set in the database, so the bounds are
 * tested to the millisecond.
 */
const world = saleWorldOfThisFile();

const at = (time: string) => new Date(`2026-01-01T${time}Z`);

/** A program paying 20 % at once, one affiliate, a USD and an EUR sale, their two payouts. */
async function twoPayouts() {
  const programId = newProgramId();
  const { affiliate: affiliateService, sale } = world();
  await world()
    .api(affiliateService, programId)
    .post('/commission-plans', { name: 'Now', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 0, isDefault: true })
    .expect(200);
  const affiliate = await createAffiliate(world(), programId);
  const referral = await createReferral(world(), programId, { affiliateId: affiliate.id });
  const api = world().api(sale, programId);
  const usd = (await api.post('/sales', { referralId: referral.id, totalEarned: 100 }).expect(200)).body;
  const eur = (await api.post('/sales', { referralId: referral.id, totalEarned: 50, currency: 'EUR' }).expect(200)).body;
  const payouts = (await api.post('/payouts', {}).expect(200)).body as { id: string; currency: string }[];
  const payoutIn = (currency: string) => payouts.find((payout) => payout.currency === currency)!;
  return { programId, api, sales: { usd, eur }, payouts: { usd: payoutIn('USD'), eur: payoutIn('EUR') } };
}

const ids = (body: { id: string }[]) => body.map((item) => item.id);

test('GET /payouts filters by currency and by createdAt and paidAt periods whose bounds are exact', async () => {
  const { api, payouts } = await twoPayouts();
  await api.put('/payouts', { payoutId: payouts.eur.id, status: 'PAID' }).expect(200);
  const stored = world().sale.context.connection.collection('payouts');
  await stored.updateOne({ _id: payouts.usd.id as never }, { $set: { createdAt: at('10:00:00.000') } });
  await stored.updateOne({ _id: payouts.eur.id as never }, { $set: { createdAt: at('11:00:00.000'), paidAt: at('12:00:00.000') } });

  expect(ids((await api.get('/payouts', { currency: 'eur' }).expect(200)).body)).toEqual([payouts.eur.id]);
  expect(
    ids(
      (
        await api
          .get('/payouts', { 'createdAt[gte]': at('10:00:00.000').toISOString(), 'createdAt[lt]': at('11:00:00.000').toISOString() })
          .expect(200)
      ).body,
    ),
  ).toEqual([payouts.usd.id]);
  expect(ids((await api.get('/payouts', { 'createdAt[gte]': at('10:00:00.001').toISOString() }).expect(200)).body)).toEqual([
    payouts.eur.id,
  ]);
  // Only a paid payout has a paidAt: the unpaid one is in no paidAt period.
  expect(
    ids(
      (
        await api
          .get('/payouts', { 'paidAt[gte]': at('12:00:00.000').toISOString(), 'paidAt[lt]': at('12:00:00.001').toISOString() })
          .expect(200)
      ).body,
    ),
  ).toEqual([payouts.eur.id]);
  expect((await api.get('/payouts', { 'paidAt[lt]': at('12:00:00.000').toISOString() }).expect(200)).body).toEqual([]);
  expect((await api.get('/payouts', { currency: 'USD', status: 'PAID' }).expect(200)).body).toEqual([]);
});

test("GET /commissions filters by currency and by its sale's createdAt period, in JSON and in CSV alike", async () => {
  const { api, sales } = await twoPayouts();
  const stored = world().sale.context.connection.collection('sales');
  await stored.updateOne({ _id: sales.usd.id as never }, { $set: { createdAt: at('10:00:00.000') } });
  await stored.updateOne({ _id: sales.eur.id as never }, { $set: { createdAt: at('11:00:00.000') } });

  const listed = (await api.get('/commissions', { 'createdAt[lt]': at('11:00:00.000').toISOString() }).expect(200)).body as {
    saleId: string;
    currency: string;
  }[];
  expect(listed.map((commission) => [commission.saleId, commission.currency])).toEqual([[sales.usd.id, 'USD']]);
  const eur = (await api.get('/commissions', { currency: 'EUR', 'createdAt[gte]': at('11:00:00.000').toISOString() }).expect(200)).body as {
    saleId: string;
  }[];
  expect(eur.map((commission) => commission.saleId)).toEqual([sales.eur.id]);
  const csv = await api.get('/commissions', { format: 'csv', currency: 'EUR' }).expect(200);
  expect(csv.text.split('\r\n').filter(Boolean)).toEqual([
    '"id","sale_id","affiliate_id","amount","currency","status","available_at","adjusts","payout_id","sale_created_at"',
    expect.stringMatching(
      new RegExp(
        `^"[0-9a-f-]{36}","${sales.eur.id}","[0-9a-f-]{36}","10.00","EUR","DUE","[^"]+","","[0-9a-f-]{36}","2026-01-01T11:00:00.000Z"$`,
      ),
    ),
  ]);
});
