import { MAX_REPORT_PERIOD_DAYS, TRACKING_DEFAULTS, type AffiliateReportRow } from '@affiliate/contracts';

const DEFAULT_REPORTING_CURRENCY = TRACKING_DEFAULTS.reportingCurrency;
import { badRequest, fromMinorUnits } from '@affiliate/platform';
import { findAffiliateActivity } from '../data-access/affiliate-directory';
import { statusOf } from '../data-access/sales';
import type { SaleDependencies } from './sale-dependencies';

/** One affiliate's figures in one currency, in its minor units: nothing is ever added across currencies. */
type Tally = { sales: number; revenue: number; earned: number; pending: number; held: number; due: number; paid: number; voided: number };
const emptyTally = (): Tally => ({ sales: 0, revenue: 0, earned: 0, pending: 0, held: 0, due: 0, paid: 0, voided: 0 });

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The report's period [from, to): `to` defaults to now; it must come after `from` and span at most
 * MAX_REPORT_PERIOD_DAYS, so that no report reads more than a year of sales.
 */
export function reportPeriod(period: { from: string; to?: string }, now = new Date()): { from: Date; to: Date } {
  const from = new Date(period.from);
  const to = period.to ? new Date(period.to) : now;
  if (from >= to)
    throw badRequest(
      period.to ? 'to: must be after from' : 'from: must be in the past (to defaults to now)',
      'parameter_invalid',
      period.to ? 'to' : 'from',
    );
  if (to.getTime() - from.getTime() > MAX_REPORT_PERIOD_DAYS * DAY_MS) {
    throw badRequest(
      `to: the period from \`from\` to \`to\` spans at most ${MAX_REPORT_PERIOD_DAYS} days; ask for several reports to cover more`,
      'parameter_invalid',
      'to',
    );
  }
  return { from, to };
}

/**
 * GET /reports/affiliates: per affiliate and currency, the clicks and referrals (affiliate service)
 * and the sales, revenue and commission (this service) of the period [from, to). A sale counts in
 * its currency's row, a commission in its own currency's row (a FLAT plan pays in the plan's
 * currency). `sales` and `revenue` count the live sales recorded in the period. Commission is that
 * of every sale recorded in the period, reversed ones included, by its status now: pending, held,
 * due, paid, voided, and earned (all but voided, so earned = pending + held + due + paid). A
 * reversed sale's commission is VOID, or, when it was already in a payout, stays (PAID once paid)
 * beside its negative adjustment (due at once, then netted in the next payout): both count, as in
 * the statement and the payouts. An adjustment of a live sale counts the same way. An affiliate with nothing in the period has one row, in the program's reporting currency.
 * The sales are read one batch at a time and added up as they come, so memory grows with the
 * affiliates and currencies, not with the sales.
 */
export async function affiliateReport(
  deps: SaleDependencies,
  programId: string,
  query: { from: string; to?: string },
): Promise<AffiliateReportRow[]> {
  const now = new Date();
  const period = reportPeriod(query, now);
  const tallies = new Map<string, Map<string, Tally>>();
  const tallyOf = (affiliateId: string, currency: string) => {
    const byCurrency = tallies.get(affiliateId) ?? new Map<string, Tally>();
    tallies.set(affiliateId, byCurrency);
    const tally = byCurrency.get(currency) ?? emptyTally();
    byCurrency.set(currency, tally);
    return tally;
  };
  const addSales = async () => {
    for await (const sale of deps.repositories.sales.recordedBetween(programId, period.from, period.to)) {
      const tally = tallyOf(sale.affiliateId, sale.currency);
      if (!sale.reversedAt) {
        tally.sales += 1;
        tally.revenue += sale.totalEarnedMinor;
      }
      for (const commission of sale.commissions) {
        const inCurrency = tallyOf(sale.affiliateId, commission.currency);
        const status = statusOf(commission, sale, now);
        if (status === 'VOID') inCurrency.voided += commission.amountMinor;
        else inCurrency.earned += commission.amountMinor;
        if (status === 'PENDING') inCurrency.pending += commission.amountMinor;
        if (status === 'HELD') inCurrency.held += commission.amountMinor;
        if (status === 'DUE') inCurrency.due += commission.amountMinor;
        if (status === 'PAID') inCurrency.paid += commission.amountMinor;
      }
    }
  };
  const [activity] = await Promise.all([
    findAffiliateActivity(deps.affiliates, programId, { from: period.from.toISOString(), to: period.to.toISOString() }),
    addSales(),
  ]);
  return activity.flatMap((affiliate) => {
    const reporting = affiliate.reportingCurrency ?? DEFAULT_REPORTING_CURRENCY;
    const byCurrency = tallies.get(affiliate.affiliateId) ?? new Map([[reporting, emptyTally()]]);
    // The reporting currency first, then the others alphabetically.
    const currencies = [...byCurrency.keys()].sort((a, b) => Number(b === reporting) - Number(a === reporting) || a.localeCompare(b));
    return currencies.map((currency) => {
      const tally = byCurrency.get(currency) ?? emptyTally();
      const money = (units: number) => fromMinorUnits(units, currency);
      return {
        affiliateId: affiliate.affiliateId,
        name: affiliate.name,
        email: affiliate.email,
        currency,
        clicks: affiliate.clicks,
        referrals: affiliate.referrals,
        sales: tally.sales,
        revenue: money(tally.revenue),
        commissionEarned: money(tally.earned),
        commissionPending: money(tally.pending),
        commissionHeld: money(tally.held),
        commissionDue: money(tally.due),
        commissionPaid: money(tally.paid),
        commissionVoided: money(tally.voided),
      };
    });
  });
}
