import type { AffiliateReportRow } from '@affiliate/contracts';
import { badRequest, MoneyTally } from '@affiliate/platform';
import { findAffiliateActivity } from '../data-access/affiliate-directory';
import { statusOf } from '../data-access/sales';
import type { SaleDependencies } from './sale-dependencies';

type Tally = { sales: number; revenue: MoneyTally; earned: MoneyTally; due: MoneyTally; paid: MoneyTally };

/**
 * GET /reports/affiliates: per affiliate, the clicks and referrals (affiliate service) and the sales,
 * revenue and commission (this service) of the period [from, to). Commission is that of the sales
 * recorded in the period, by its status now: earned (all but void), of which due and paid.
 */
export async function affiliateReport(deps: SaleDependencies, programId: string, period: { from?: string; to?: string }): Promise<AffiliateReportRow[]> {
  const from = period.from ? new Date(period.from) : undefined;
  const to = period.to ? new Date(period.to) : undefined;
  if (from && to && from >= to) throw badRequest('to: must be after from');
  const [activity, sales] = await Promise.all([findAffiliateActivity(deps.affiliates, programId, period), deps.repositories.sales.recordedBetween(programId, from, to)]);
  const now = new Date();
  const tallies = new Map<string, Tally>();
  const tallyOf = (affiliateId: string) => {
    const tally = tallies.get(affiliateId) ?? { sales: 0, revenue: new MoneyTally(), earned: new MoneyTally(), due: new MoneyTally(), paid: new MoneyTally() };
    tallies.set(affiliateId, tally);
    return tally;
  };
  for (const sale of sales) {
    const tally = tallyOf(sale.affiliateId);
    tally.sales += 1;
    tally.revenue.add(sale.totalEarnedMinor, sale.currency);
    for (const commission of sale.commissions) {
      const status = statusOf(commission, sale, now);
      if (status === 'VOID') continue;
      tally.earned.add(commission.amountMinor, commission.currency);
      if (status === 'DUE') tally.due.add(commission.amountMinor, commission.currency);
      if (status === 'PAID') tally.paid.add(commission.amountMinor, commission.currency);
    }
  }
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
    };
  });
}
