import { AffiliateReportRow, Payout, Sale } from '@affiliate/contracts';
import { fromMinorUnits, toMinorUnits } from '@affiliate/platform';
import { newProgramId } from '@affiliate/platform/testing';
import prand from 'pure-rand';
import { createAffiliate, createReferral, saleWorldOfThisFile, type SaleWorld } from './sale-world';

/**
 * The report reconciles: after every step of a random history (sales in several currencies, some
 * paid long ago so their hold is over, reversals, partial refunds, payouts marked PAID or FAILED),
 * each affiliate's report row in each currency equals the sums over that affiliate's commissions as
 * GET /sales shows them. Run with a fixed seed and a random one; RECONCILE_SEED=<n> replays a failure.
 */
const worldOf = saleWorldOfThisFile();
const STEPS = 20;
const CURRENCIES = ['USD', 'EUR', 'JPY', 'KWD'];
const DAY_MS = 86_400_000;

type Figures = { sales: number; revenue: number; earned: number; pending: number; due: number; paid: number; voided: number };
const none = (): Figures => ({ sales: 0, revenue: 0, earned: 0, pending: 0, due: 0, paid: 0, voided: 0 });

/** Per affiliate and currency, in minor units: what the commissions of the live sales add up to. */
function expectedFrom(sales: Sale[]): Map<string, Figures> {
  const figures = new Map<string, Figures>();
  const of = (currency: string) => figures.get(currency) ?? figures.set(currency, none()).get(currency)!;
  for (const sale of sales) {
    of(sale.currency).sales += 1;
    of(sale.currency).revenue += toMinorUnits(sale.totalEarned, sale.currency);
    for (const commission of sale.commissions) {
      const units = toMinorUnits(commission.amount, commission.currency);
      const entry = of(commission.currency);
      if (commission.status === 'VOID') entry.voided += units;
      else entry.earned += units;
      if (commission.status === 'PENDING') entry.pending += units;
      if (commission.status === 'DUE') entry.due += units;
      if (commission.status === 'PAID') entry.paid += units;
    }
  }
  return figures;
}

const inUnits = (row: AffiliateReportRow): Figures => {
  const units = (amount: number) => toMinorUnits(amount, row.currency);
  return {
    sales: row.sales,
    revenue: units(row.revenue),
    earned: units(row.commissionEarned),
    pending: units(row.commissionPending),
    due: units(row.commissionDue),
    paid: units(row.commissionPaid),
    voided: units(row.commissionVoided),
  };
};

async function ok<T>(pending: PromiseLike<{ status: number; body: unknown }>, what: string): Promise<T> {
  const response = await pending;
  if (response.status >= 500) throw new Error(`${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body as T;
}

async function checkReconciles(world: SaleWorld, programId: string, affiliateIds: string[], since: string): Promise<void> {
  const api = world.api(world.sale, programId);
  const rows = AffiliateReportRow.array().parse(await ok(api.get('/reports/affiliates', { from: since }), 'the report'));
  for (const affiliateId of affiliateIds) {
    const sales = Sale.array().parse(await ok(api.get('/sales', { affiliateId, limit: '1000' }), 'the sales'));
    const expected = expectedFrom(sales);
    const reported = new Map(rows.filter((row) => row.affiliateId === affiliateId).map((row) => [row.currency, inUnits(row)]));
    // An affiliate with nothing yet has one row of zeros in the reporting currency.
    if (expected.size === 0) expected.set('USD', none());
    expect(Object.fromEntries(reported)).toEqual(Object.fromEntries(expected));
    for (const [currency, figures] of reported) {
      expect({ currency, earned: figures.earned }).toEqual({ currency, earned: figures.pending + figures.due + figures.paid });
    }
  }
}

async function randomHistory(seed: number): Promise<void> {
  const world = worldOf();
  let rng = prand.xoroshiro128plus(seed);
  const pick = (min: number, max: number) => {
    const [value, next] = prand.uniformIntDistribution(min, max, rng);
    rng = next;
    return value;
  };
  const programId = newProgramId();
  const since = new Date(Date.now() - DAY_MS).toISOString();
  const sales = world.api(world.sale, programId);
  const affiliates = [await createAffiliate(world, programId, { commissionRate: 20 }), await createAffiliate(world, programId, { commissionRate: 12.5 })];
  const referrals = await Promise.all(affiliates.map((affiliate) => createReferral(world, programId, { affiliateId: affiliate.id })));
  const live: Sale[] = [];
  const history: string[] = [];
  for (let step = 0; step < STEPS; step += 1) {
    const kind = live.length === 0 ? 0 : pick(0, 9);
    if (kind <= 4) {
      const currency = CURRENCIES[pick(0, CURRENCIES.length - 1)]!;
      const totalEarned = fromMinorUnits(pick(1, 500_000), currency);
      // Half of them paid 40 days ago: past any hold, so DUE and ready for a payout.
      const paidAt = new Date(Date.now() - (pick(0, 1) === 1 ? 40 * DAY_MS : 0)).toISOString();
      const body = { referralId: referrals[pick(0, referrals.length - 1)]!.id, totalEarned, currency, paidAt };
      history.push(`sale ${totalEarned} ${currency}${paidAt < since ? ' paid 40 days ago' : ''}`);
      live.push(Sale.parse(await ok(sales.post('/sales', body), 'a sale')));
    } else if (kind <= 5) {
      const [sale] = live.splice(pick(0, live.length - 1), 1);
      history.push(`reversal of ${sale!.totalEarned} ${sale!.currency}`);
      await ok(sales.delete('/sales', { saleId: sale!.id }), 'a reversal');
    } else if (kind <= 7) {
      const sale = live[pick(0, live.length - 1)]!;
      const refunded = fromMinorUnits(Math.floor(toMinorUnits(sale.totalEarned, sale.currency) * pick(1, 99) / 100), sale.currency);
      history.push(`partial refund of ${sale.totalEarned} ${sale.currency} to ${refunded}`);
      // Refused (400) once the commission is paid or in a payout: then nothing changes, which must reconcile too.
      await ok(sales.put('/sales', { saleId: sale.id, totalEarned: refunded }), 'a partial refund');
    } else {
      const payouts = Payout.array().parse(await ok(sales.post('/payouts', {}), 'a payout run'));
      for (const payout of payouts) {
        const status = pick(0, 1) === 1 ? 'PAID' : 'FAILED';
        history.push(`payout of ${payout.amount} ${payout.currency} ${status}`);
        await ok(sales.put('/payouts', { payoutId: payout.id, status }), 'marking a payout');
      }
      if (payouts.length === 0) history.push('payout run with nothing due');
    }
    if (process.env.RECONCILE_DEBUG) console.log(history.at(-1));
    try {
      await checkReconciles(world, programId, affiliates.map((affiliate) => affiliate.id), since);
    } catch (error) {
      throw new Error(`The report does not reconcile with seed ${seed} (replay: RECONCILE_SEED=${seed}) after: ${history.join('; ')}\n${(error as Error).message}`);
    }
  }
}

test('the report reconciles with the commissions after every step of a fixed history (seed 20261125)', async () => {
  await randomHistory(20261125);
}, 240_000);

test('the report reconciles with the commissions after every step of a random history (the seed is printed on failure)', async () => {
  await randomHistory(Number(process.env.RECONCILE_SEED ?? Math.floor(Math.random() * 2 ** 31)));
}, 240_000);
