import { SUMMARY_DEFAULT_DAYS, type CurrencySummary, type ProgramSummary } from '@affiliate/contracts';
import { fromMinorUnits, utcDaysOf } from '@affiliate/platform';
import { summaryPartsOf } from '../data-access/summary-parts';
import { reportPeriod } from './reports';
import type { SaleDependencies } from './sale-dependencies';

const DAY_MS = 24 * 60 * 60 * 1000;

/** One currency's sums of one day (or of the period), in its minor units. */
type Sums = { sales: number; revenue: number; commission: number };
const noSums = (): Sums => ({ sales: 0, revenue: 0, commission: 0 });

/**
 * GET /reports/summary: the program at a glance for [from, to) (default: the last
 * SUMMARY_DEFAULT_DAYS days up to now), every figure counted or summed by a database over the whole
 * program (never a page of a list): the affiliates and referrals by their services, the sales here.
 * Money stays per currency, the program's reporting currency first; each currency has one entry per
 * UTC day of the period, for charts. The period is checked as a report's is (reportPeriod).
 */
export async function programSummary(
  deps: SaleDependencies,
  programId: string,
  query: { from?: string; to?: string },
): Promise<ProgramSummary> {
  const now = new Date();
  const until = query.to ? new Date(query.to) : now;
  const from = query.from ?? new Date(until.getTime() - SUMMARY_DEFAULT_DAYS * DAY_MS).toISOString();
  const period = reportPeriod({ from, to: query.to }, now);
  const [parts, sales] = await Promise.all([summaryPartsOf(deps, programId, period), deps.repositories.sales.summaryOf(programId, period)]);
  const { reportingCurrency, ...affiliates } = parts.affiliates;

  // Per currency, then per day: nothing here adds two currencies.
  const sums = new Map<string, Map<string, Sums>>([[reportingCurrency, new Map()]]);
  const sumsOf = (currency: string, day: string) => {
    const byDay = sums.get(currency) ?? new Map<string, Sums>();
    sums.set(currency, byDay);
    const found = byDay.get(day) ?? noSums();
    byDay.set(day, found);
    return found;
  };
  for (const row of sales.sales) {
    const found = sumsOf(row._id.currency, row._id.day);
    found.sales += row.sales;
    found.revenue += row.revenue;
  }
  for (const row of sales.commissions) sumsOf(row._id.currency, row._id.day).commission += row.commission;

  const days = utcDaysOf(period.from, period.to);
  const currencies = [...sums.keys()].sort(
    (a, b) => Number(b === reportingCurrency) - Number(a === reportingCurrency) || a.localeCompare(b),
  );
  const byCurrency = currencies.map((currency): CurrencySummary => {
    const byDay = sums.get(currency) ?? new Map<string, Sums>();
    const total = [...byDay.values()].reduce(
      (sum, each) => ({ sales: sum.sales + each.sales, revenue: sum.revenue + each.revenue, commission: sum.commission + each.commission }),
      noSums(),
    );
    const money = (units: number) => fromMinorUnits(units, currency);
    return {
      currency,
      sales: total.sales,
      revenue: money(total.revenue),
      commission: money(total.commission),
      daily: days.map((day) => {
        const found = byDay.get(day) ?? noSums();
        return { day, sales: found.sales, revenue: money(found.revenue), commission: money(found.commission) };
      }),
    };
  });
  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    affiliates,
    referrals: parts.referrals,
    sales: { count: byCurrency.reduce((sum, each) => sum + each.sales, 0), byCurrency },
  };
}
