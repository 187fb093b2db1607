import { call, type Credential } from '../api';
import { Chart, ErrorBanner, round, useLoad } from '../ui';

type Sale = {
  createdAt: string;
  paidAt?: string;
  totalEarned: number;
  currency: string;
  commissionEarned: number;
  commissions?: { currency: string }[];
};
type Program = { reportingCurrency?: string };
type Delivery = { createdAt: string; status: string };

const DAYS = 30;
const DAY = 86_400_000;
const MAX_PAGES = 5;

/** Every page of a list, up to MAX_PAGES of 1000 (the charts look at the recent past only). */
async function recent<T extends { createdAt: string }>(credential: Credential, path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer: { items: T[]; next: string | null } = await call<T[]>(
      credential,
      'GET',
      `${path}?limit=1000${cursor ? `&startingAfter=${encodeURIComponent(cursor)}` : ''}`,
    );
    items.push(...answer.items);
    cursor = answer.next;
    if (!cursor) break;
  }
  return items;
}

/** A sale counts on the day it was paid; a delivery on the day it was created. */
const dayOf = (item: { createdAt: string; paidAt?: string }) => Date.parse(item.paidAt ?? item.createdAt);

/** Per day of the last DAYS days (UTC): the day's start in seconds, as uPlot reads time. */
function daily<T extends { createdAt: string; paidAt?: string }>(
  items: T[],
  value: (items: T[]) => number,
): { days: number[]; values: number[] } {
  const today = Math.floor(Date.now() / DAY) * DAY;
  const days = Array.from({ length: DAYS }, (_unused, index) => today - (DAYS - 1 - index) * DAY);
  const values = days.map((start) => value(items.filter((item) => dayOf(item) >= start && dayOf(item) < start + DAY)));
  return { days: days.map((start) => start / 1000), values };
}

/** The currency of a sale's commissionEarned: its commission's (a FLAT plan pays in the plan's currency), else the sale's. */
const commissionCurrencyOf = (sale: Sale) => sale.commissions?.[0]?.currency ?? sale.currency;

/**
 * Amounts per currency, never added across currencies: the reporting currency first (always shown,
 * 0 without sales), then the others alphabetically.
 */
function perCurrency(
  sales: Sale[],
  reporting: string,
  amount: (sale: Sale) => number,
  currencyOf: (sale: Sale) => string,
): [string, number][] {
  const sums = new Map<string, number>([[reporting, 0]]);
  for (const sale of sales) sums.set(currencyOf(sale), (sums.get(currencyOf(sale)) ?? 0) + amount(sale));
  return [...sums.entries()]
    .map(([currency, sum]): [string, number] => [currency, round(sum)])
    .sort(([a], [b]) => Number(b === reporting) - Number(a === reporting) || a.localeCompare(b));
}

/** One line per currency. */
function Amounts({ amounts }: { amounts: [string, number][] }) {
  return (
    <ul class="amounts">
      {amounts.map(([currency, amount]) => (
        <li key={currency}>
          {amount} {currency}
        </li>
      ))}
    </ul>
  );
}

export function Overview({ credential }: { credential: Credential }) {
  const data = useLoad(async () => {
    const [sales, deliveries, affiliates, referrals, program] = await Promise.all([
      recent<Sale>(credential, '/sales'),
      recent<Delivery>(credential, '/webhook-deliveries'),
      call<unknown[]>(credential, 'GET', '/affiliates?limit=1000'),
      call<unknown[]>(credential, 'GET', '/referrals?limit=1000'),
      call<Program>(credential, 'GET', '/program'),
    ]);
    return {
      sales,
      deliveries,
      affiliates: affiliates.items?.length ?? 0,
      referrals: referrals.items.length,
      reporting: program.items.reportingCurrency ?? 'USD',
    };
  }, []);
  const value = data.value;
  const salesByDay = value ? daily(value.sales, (items) => items.length) : null;
  // The chart is in the reporting currency only (labelled): a day's figure never adds two currencies.
  const reporting = value?.reporting ?? 'USD';
  const revenueByDay = value
    ? daily(value.sales, (items) =>
        round(items.filter((sale) => sale.currency === reporting).reduce((sum, sale) => sum + sale.totalEarned, 0)),
      )
    : null;
  const commissionByDay = value
    ? daily(value.sales, (items) =>
        round(items.filter((sale) => commissionCurrencyOf(sale) === reporting).reduce((sum, sale) => sum + sale.commissionEarned, 0)),
      )
    : null;
  const successByDay = value
    ? daily(value.deliveries, (items) => {
        const settled = items.filter((delivery) => delivery.status !== 'pending');
        return settled.length === 0
          ? 0
          : round((100 * settled.filter((delivery) => delivery.status === 'succeeded').length) / settled.length);
      })
    : null;
  const delivered = value?.deliveries.filter((delivery) => delivery.status === 'succeeded').length ?? 0;
  const settled = value?.deliveries.filter((delivery) => delivery.status !== 'pending').length ?? 0;
  return (
    <section>
      <h1>Program overview</h1>
      <ErrorBanner error={data.error} />
      {value ? (
        <>
          <dl class="tiles">
            <div>
              <dt>Affiliates</dt>
              <dd>{value.affiliates}</dd>
            </div>
            <div>
              <dt>Referrals</dt>
              <dd>{value.referrals}</dd>
            </div>
            <div>
              <dt>Sales</dt>
              <dd>{value.sales.length}</dd>
            </div>
            <div>
              <dt>Revenue</dt>
              <dd>
                <Amounts
                  amounts={perCurrency(
                    value.sales,
                    value.reporting,
                    (sale) => sale.totalEarned,
                    (sale) => sale.currency,
                  )}
                />
              </dd>
            </div>
            <div>
              <dt>Commission</dt>
              <dd>
                <Amounts amounts={perCurrency(value.sales, value.reporting, (sale) => sale.commissionEarned, commissionCurrencyOf)} />
              </dd>
            </div>
            <div>
              <dt>Webhooks delivered</dt>
              <dd>{settled === 0 ? '—' : `${round((100 * delivered) / settled)} %`}</dd>
            </div>
          </dl>
          <div class="charts">
            {salesByDay ? (
              <Chart
                title="Sales per day (last 30 days)"
                days={salesByDay.days}
                series={[{ label: 'sales', values: salesByDay.values, color: '#1d4ed8' }]}
              />
            ) : null}
            {revenueByDay && commissionByDay ? (
              <Chart
                title={`Revenue and commission per day, in ${reporting} (the reporting currency; other currencies are in the tiles)`}
                days={revenueByDay.days}
                series={[
                  { label: `revenue ${reporting}`, values: revenueByDay.values, color: '#047857' },
                  { label: `commission ${reporting}`, values: commissionByDay.values, color: '#b45309' },
                ]}
              />
            ) : null}
            {successByDay ? (
              <Chart
                title="Webhook delivery success rate per day (%)"
                days={successByDay.days}
                series={[{ label: 'succeeded %', values: successByDay.values, color: '#7c3aed' }]}
              />
            ) : null}
          </div>
        </>
      ) : (
        <p>Loading…</p>
      )}
    </section>
  );
}
