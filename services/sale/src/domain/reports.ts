import { MAX_REPORT_PERIOD_DAYS, type AffiliateReportRow } from '@affiliate/contracts';
import { badRequest, MoneyTally } from '@affiliate/platform';
import { findAffiliateActivity } from '../data-access/affiliate-directory';
import { statusOf } from '../data-access/sales';
import type { SaleDependencies } from './sale-dependencies';

type Tally = { sales: number; revenue: MoneyTally; earned: MoneyTally; due: MoneyTally; paid: MoneyTally; held: MoneyTally; voided: MoneyTally };

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The report's period [from, to): `to` defaults to now; it must come after `from` and span at most
 * MAX_REPORT_PERIOD_DAYS, so that no report reads more than a year of sales.
 */
export function reportPeriod(period: { from: string; to?: string }, now = new Date()): { from: Date; to: Date } {
  const from = new Date(period.from);
  const to = period.to ? new Date(period.to) : now;
  if (from >= to) throw badRequest(period.to ? 'to: must be after from' : 'from: must be in the past (to defaults to now)');
  if (to.getTime() - from.getTime() > MAX_REPORT_PERIOD_DAYS * DAY_MS) {
    throw badRequest(`to: the period from \`from\` to \`to\` spans at most ${MAX_REPORT_PERIOD_DAYS} days; ask for several reports to cover more`);
  }
  return { from, to };
}

/**
 * GET /reports/affiliates: per affiliate, the clicks and referrals (affiliate service) and the sales,
 * revenue and commission (this service) of the period [from, to). Commission is that of the sales
 * recorded in the period, by its status now: earned (all but void), of which due and paid. The sales
 * are read one batch at a time and added up as they come, so memory grows with the affiliates, not
 * with the sales.
 */
export async function affiliateReport(deps: SaleDependencies, programId: string, query: { from: string; to?: string }): Promise<AffiliateReportRow[]> {
  const now = new Date();
  const period = reportPeriod(query, now);
  const tallies = new Map<string, Tally>();
  const tallyOf = (affiliateId: string) => {
    const tally = tallies.get(affiliateId) ?? { sales: 0, revenue: new MoneyTally(), earned: new MoneyTally(), due: new MoneyTally(), paid: new MoneyTally(), held: new MoneyTally(), voided: new MoneyTally() };
    tallies.set(affiliateId, tally);
    return tally;
  };
  const addSales = async () => {
    for await (const sale of deps.repositories.sales.recordedBetween(programId, period.from, period.to)) {
      const tally = tallyOf(sale.affiliateId);
      tally.sales += 1;
      tally.revenue.add(sale.totalEarnedMinor, sale.currency);
      for (const commission of sale.commissions) {
        const status = statusOf(commission, sale, now);
        // Voided ones are not earned, but the review queue's totals show them (issue 28), as the held ones.
        if (status === 'VOID') {
          tally.voided.add(commission.amountMinor, commission.currency);
          continue;
        }
        if (status === 'HELD') tally.held.add(commission.amountMinor, commission.currency);
        tally.earned.add(commission.amountMinor, commission.currency);
        if (status === 'DUE') tally.due.add(commission.amountMinor, commission.currency);
        if (status === 'PAID') tally.paid.add(commission.amountMinor, commission.currency);
      }
    }
  };
  const [activity] = await Promise.all([
    findAffiliateActivity(deps.affiliates, programId, { from: period.from.toISOString(), to: period.to.toISOString() }),
    addSales(),
  ]);
  return activity.map((affiliate) => {
    const tally = tallyOf(affiliate.affiliateId);
    return {
      affiliateId: affiliate.affiliateId,
      name: affiliate.name,
      email: affiliate.email,
      clicks: affiliate.clicks,
      referrals: affiliate.referrals,
      sales: tally.sales,
      revenue: tally.revenue.faceValue(),
      commissionEarned: tally.earned.faceValue(),
      commissionDue: tally.due.faceValue(),
      commissionPaid: tally.paid.faceValue(),
      commissionHeld: tally.held.faceValue(),
      commissionVoided: tally.voided.faceValue(),
    };
  });
}
