import { useState } from 'preact/hooks';
import { ok, type ApiClient, type PageProps, type Schemas } from '../client';
import { Field, fieldsOf } from '../fields';
import { FormError } from '../forms';
import { money, saveAsFile } from '../money-and-files';
import { Action, ErrorBanner, Table, useLoad, when } from '../ui';
import { dayOf, startOfDay } from '../values';

type ReportRow = Schemas['AffiliateReportRow'];
type Period = { from: string; to?: string };

const DAY_MS = 86_400_000;

/** The period's query: `to` (excluded) only when the form gave one; absent, the API reads up to now. */
const periodQuery = (period: Period) => ({ from: period.from, ...(period.to ? { to: period.to } : {}) });

/**
 * Per affiliate and currency over a period: clicks, referrals, sales, revenue and the commission by
 * status (GET /reports/affiliates), as a table or a CSV file; and one affiliate's statement in one
 * currency over the same period (GET /affiliates/statement), with its own CSV.
 */
export function Reports({ client, can }: PageProps) {
  // The last 30 days, today included (to: the start of tomorrow, excluded).
  const [fromDay, setFromDay] = useState(dayOf(new Date(Date.now() - 29 * DAY_MS)));
  const [toDay, setToDay] = useState(dayOf(new Date(Date.now() + DAY_MS)));
  const periodOfForm = (): Period => ({ from: startOfDay(fromDay), ...(toDay ? { to: startOfDay(toDay) } : {}) });
  const [period, setPeriod] = useState<Period>(periodOfForm);
  const [statementOf, setStatementOf] = useState<ReportRow | null>(null);
  // A heavy operation for the API: run for the period shown, on request, never on each keystroke.
  const report = useLoad(() => ok(client.GET('/api/v1/reports/affiliates', { params: { query: periodQuery(period) } })), [period]);
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const formError = report.error ?? downloadError;
  const field = fieldsOf(formError);
  return (
    <section>
      <h1>Reports</h1>
      <form
        class="panel"
        aria-labelledby="report-period-title"
        onSubmit={(event) => {
          event.preventDefault();
          setDownloadError(null);
          setStatementOf(null);
          // A new object each time: asking again for the same period runs the report again.
          setPeriod(periodOfForm());
        }}
      >
        <h2 id="report-period-title">Period</h2>
        <Field id="report-from" label="From (UTC day, included)" type="date" {...field('from', fromDay, setFromDay)} />
        <Field id="report-to" label="To (UTC day, excluded; empty: up to now)" type="date" {...field('to', toDay, setToDay)} />
        <button type="submit">Show report</button>
        {can('getAffiliateReport') ? (
          <button
            type="button"
            onClick={async () => {
              setDownloadError(null);
              try {
                const shown = periodOfForm();
                const csv = await ok(
                  client.GET('/api/v1/reports/affiliates', {
                    params: { query: periodQuery(shown) },
                    headers: { accept: 'text/csv' },
                    parseAs: 'text',
                  }),
                );
                saveAsFile(`affiliates-${fromDay}-to-${toDay || 'now'}.csv`, csv);
              } catch (failed) {
                setDownloadError(failed);
              }
            }}
          >
            Download CSV
          </button>
        ) : null}
        <FormError error={formError} params={['from', 'to']} />
      </form>
      {/* A period the API refused shows its message, not the figures of the period before. */}
      {report.error ? null : (
        <Table
          caption={`Affiliates from ${when(period.from)} to ${period.to ? when(period.to) : 'now'}`}
          rows={report.value ?? []}
          empty="No affiliate yet."
          columns={[
            { title: 'Affiliate', value: (row) => `${row.name} (${row.email})` },
            { title: 'Currency', value: (row) => row.currency },
            { title: 'Clicks', value: (row) => row.clicks },
            { title: 'Referrals', value: (row) => row.referrals },
            { title: 'Sales', value: (row) => row.sales },
            { title: 'Revenue', value: (row) => money(row.revenue, row.currency) },
            { title: 'Commission earned', value: (row) => money(row.commissionEarned, row.currency) },
            { title: 'Pending', value: (row) => money(row.commissionPending, row.currency) },
            { title: 'Held', value: (row) => money(row.commissionHeld, row.currency) },
            { title: 'Due', value: (row) => money(row.commissionDue, row.currency) },
            { title: 'Paid', value: (row) => money(row.commissionPaid, row.currency) },
            { title: 'Voided', value: (row) => money(row.commissionVoided, row.currency) },
            ...(can('getAffiliateStatement')
              ? [
                  {
                    title: 'Statement',
                    value: (row: ReportRow) => (
                      <button type="button" onClick={() => setStatementOf(row)}>
                        Statement of {row.name} in {row.currency}
                      </button>
                    ),
                  },
                ]
              : []),
          ]}
        />
      )}
      {statementOf ? <StatementOf client={client} row={statementOf} period={period} /> : null}
    </section>
  );
}

/** One affiliate's account in one currency over the report's period: opening balance, every entry, closing balance. */
function StatementOf({ client, row, period }: { client: ApiClient; row: ReportRow; period: Period }) {
  const query = { affiliateId: row.affiliateId, currency: row.currency, ...periodQuery(period) };
  const statement = useLoad(
    () => ok(client.GET('/api/v1/affiliates/statement', { params: { query } })),
    [row.affiliateId, row.currency, period.from, period.to],
  );
  const shown = statement.value;
  return (
    <section class="panel" aria-labelledby="statement-title">
      <h2 id="statement-title">
        Statement of {row.name} in {row.currency}
      </h2>
      <ErrorBanner error={statement.error} />
      {shown ? (
        <>
          <p>
            Opening balance on {when(shown.from)}: {money(shown.openingBalance, shown.currency)}. Closing balance on {when(shown.to)}:{' '}
            {money(shown.closingBalance, shown.currency)}.
          </p>
          <Table
            caption="Entries, oldest first"
            rows={shown.entries}
            empty="No entry in the period."
            columns={[
              { title: 'When', value: (entry) => when(entry.at) },
              { title: 'Entry', value: (entry) => entry.type },
              { title: 'Amount', value: (entry) => money(entry.amount, shown.currency) },
              { title: 'Description', value: (entry) => entry.description },
            ]}
          />
          <Action
            label="Download statement CSV"
            run={async () => {
              const csv = await ok(
                client.GET('/api/v1/affiliates/statement', { params: { query: { ...query, format: 'csv' } }, parseAs: 'text' }),
              );
              saveAsFile(`statement-${row.email}-${row.currency}.csv`, csv);
            }}
          />
        </>
      ) : null}
    </section>
  );
}
