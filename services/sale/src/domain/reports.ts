import type { AffiliateReportRow } from '@affiliate/contracts';
import { badRequest, fromMinorUnits } from '@affiliate/platform';
import { findAffiliateActivity } from '../data-access/affiliate-directory';
import { statusOf } from '../data-access/sales';
import type { SaleDependencies } from './sale-dependencies';

/** Minor units per currency, shown as one face-value number (a program rarely has more than one currency). */
class Money {
  private readonly byCurrency = new Map<string, number>();

  add(amountMinor: number, currency: string): void {
    this.byCurrency.set(currency, (this.byCurrency.get(currency) ?? 0) + amountMinor);
  }

  value(): number {
    let total = 0;
    for (const [currency, minor] of this.byCurrency) total += fromMinorUnits(minor, currency);
    return Math.round(total * 1e6) / 1e6;
  }
}

type Tally = { sales: number; revenue: Money; earned: Money; due: Money; paid: Money };

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
    const tally = tallies.get(affiliateId) ?? { sales: 0, revenue: new Money(), earned: new Money(), due: new Money(), paid: new Money() };
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
      revenue: tally.revenue.value(),
      commissionEarned: tally.earned.value(),
      commissionDue: tally.due.value(),
      commissionPaid: tally.paid.value(),
    };
  });
}
