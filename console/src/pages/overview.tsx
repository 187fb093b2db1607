import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { ok, type PageProps, type Schemas } from '../client';
import { Field } from '../fields';
import { FormError } from '../forms';
import { money } from '../money-and-files';
import { Notice, round, useLoad } from '../ui';
import { dayOf } from '../values';

type Summary = Schemas['ProgramSummary'];
type CurrencySummary = Schemas['CurrencySummary'];

const DAY = 86_400_000;
const PRESETS = [7, 30, 90];
const DEFAULT_DAYS = 30;
/** A colour per currency, in the order the summary lists them (the reporting currency first). */
const PALETTE = ['#1d4ed8', '#047857', '#b45309', '#7c3aed', '#be123c', '#0e7490'];
const colourOf = (index: number) => PALETTE[index % PALETTE.length] as string;

/** A UTC day as the date inputs hold it (YYYY-MM-DD). */
const dayAt = (time: number) => dayOf(new Date(time));

/** The last `days` whole UTC days, today included. */
function lastDays(days: number): { from: string; to: string } {
  const today = Math.floor(Date.now() / DAY) * DAY;
  return { from: dayAt(today - (days - 1) * DAY), to: dayAt(today) };
}

/**
 * The period the API is asked for: [start of `from`, end of `to`), whole UTC days, both included as
 * the inputs read. An empty or impossible input is sent as it is, so the API's own refusal is shown.
 */
function periodOf(range: { from: string; to: string }): { from: string; to: string } {
  const end = Date.parse(`${range.to}T00:00:00Z`);
  return {
    from: range.from ? `${range.from}T00:00:00Z` : '',
    to: Number.isFinite(end) ? new Date(end + DAY).toISOString() : range.to,
  };
}

const count = (value: number) => value.toLocaleString('en-GB');

/** One line per currency: never a sum across currencies. */
function Amounts({ entries, pick }: { entries: CurrencySummary[]; pick: (entry: CurrencySummary) => number }) {
  return (
    <ul class="amounts">
      {entries.map((entry) => (
        <li key={entry.currency}>{money(pick(entry), entry.currency)}</li>
      ))}
    </ul>
  );
}

type Series = { label: string; values: number[]; colour: string; scale: string; dashed?: boolean };

/** The scales that count things (sales, sign-ups): their axis steps are whole numbers, never 0.2 of a sale. */
const COUNT_SCALES = new Set(['sales', 'created']);
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

/**
 * A daily line chart (uPlot, bundled) across the whole width of the page, redrawn to its width when
 * the page is resized. Each `scale` gets its own axis, so two currencies share a chart without a
 * common unit and are never added; a text summary beside it is what screen readers get.
 */
function WideChart({ title, days, series }: { title: string; days: string[]; series: Series[] }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const scales = [...new Set(series.map((each) => each.scale))];
    const plot = new uPlot(
      {
        width: element.clientWidth || 800,
        height: 260,
        scales: { x: { time: true } },
        series: [
          {},
          ...series.map((each) => ({
            label: each.label,
            stroke: each.colour,
            width: 2,
            scale: each.scale,
            dash: each.dashed ? [6, 4] : undefined,
          })),
        ],
        axes: [
          {},
          ...scales.map((scale, index) => ({
            scale,
            label: scale,
            side: index % 2 === 0 ? 3 : 1,
            grid: { show: index === 0 },
            ...(COUNT_SCALES.has(scale) ? { incrs: WHOLE_STEPS } : {}),
          })),
        ],
        legend: { show: true },
      },
      [days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000), ...series.map((each) => each.values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 260 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, series]);
  const totals = series.map((each) => `${each.label}: ${round(each.values.reduce((sum, value) => sum + value, 0))}`).join('; ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} role="img" aria-label={`${title}. Over the period: ${totals}`} />
    </figure>
  );
}

/** The range's two dates, as the summary route names them in its messages. */
const RANGE_FIELDS = [
  { param: 'from', label: 'From' },
  { param: 'to', label: 'To (included)' },
] as const;

/** The date range: two dates (both days included) and the usual presets; each change reloads the page's figures. */
function RangePicker({
  range,
  error,
  onChange,
}: {
  range: { from: string; to: string };
  /** The API's refusal of the range: its messages about `from` and `to` are shown beside those dates. */
  error: unknown;
  onChange: (range: { from: string; to: string }) => void;
}) {
  const [draft, setDraft] = useState(range);
  useEffect(() => setDraft(range), [range.from, range.to]);
  return (
    <form
      class="range"
      aria-label="Period"
      onSubmit={(event) => {
        event.preventDefault();
        onChange(draft);
      }}
    >
      {RANGE_FIELDS.map(({ param, label }) => (
        <Field
          key={param}
          id={`range-${param}`}
          label={label}
          type="date"
          param={param}
          error={error}
          value={draft[param]}
          onValue={(day) => setDraft({ ...draft, [param]: day })}
        />
      ))}
      <button type="submit">Show</button>
      {PRESETS.map((days) => (
        <button key={days} type="button" onClick={() => onChange(lastDays(days))}>
          Last {days} days
        </button>
      ))}
      <FormError error={error} params={['from', 'to']} />
    </form>
  );
}

/** The figures of the period, from the one summary route: counted by the API over the whole program, never a page of a list. */
function Figures({ summary }: { summary: Summary }) {
  const currencies = summary.sales.byCurrency;
  const days = (currencies[0]?.daily ?? summary.affiliates.daily).map((each) => each.day);
  const codes = currencies.map((entry) => entry.currency).join(' and ');
  return (
    <>
      <dl class="tiles">
        <div>
          <dt>Affiliates</dt>
          <dd>{count(summary.affiliates.total)}</dd>
          <dd class="note">{count(summary.affiliates.created)} new in the period</dd>
        </div>
        <div>
          <dt>Affiliates by status</dt>
          <dd>
            <ul class="amounts">
              {summary.affiliates.byStatus.map((each) => (
                <li key={each.status}>
                  {count(each.total)} {each.status.toLowerCase()}
                </li>
              ))}
            </ul>
          </dd>
        </div>
        <div>
          <dt>Referrals</dt>
          <dd>{count(summary.referrals.created)}</dd>
          <dd class="note">{count(summary.referrals.total)} in all</dd>
        </div>
        <div>
          <dt>Sales</dt>
          <dd>{count(summary.sales.count)}</dd>
        </div>
        <div>
          <dt>Revenue</dt>
          <dd>
            <Amounts entries={currencies} pick={(entry) => entry.revenue} />
          </dd>
        </div>
        <div>
          <dt>Commission</dt>
          <dd>
            <Amounts entries={currencies} pick={(entry) => entry.commission} />
          </dd>
        </div>
      </dl>
      <div class="charts">
        <WideChart
          title="Sales per day, per currency"
          days={days}
          series={currencies.map((entry, index) => ({
            label: `sales ${entry.currency}`,
            values: entry.daily.map((each) => each.sales),
            colour: colourOf(index),
            scale: 'sales',
          }))}
        />
        <WideChart
          title={`Revenue and commission per day, in ${codes} (each currency on its own axis, never added)`}
          days={days}
          series={currencies.flatMap((entry, index) => [
            {
              label: `revenue ${entry.currency}`,
              values: entry.daily.map((each) => each.revenue),
              colour: colourOf(index),
              scale: entry.currency,
            },
            {
              label: `commission ${entry.currency}`,
              values: entry.daily.map((each) => each.commission),
              colour: colourOf(index),
              scale: entry.currency,
              dashed: true,
            },
          ])}
        />
        <WideChart
          title="New affiliates and referrals per day"
          days={days}
          series={[
            { label: 'affiliates', values: summary.affiliates.daily.map((each) => each.created), colour: '#7c3aed', scale: 'created' },
            { label: 'referrals', values: summary.referrals.daily.map((each) => each.created), colour: '#0e7490', scale: 'created' },
          ]}
        />
      </div>
    </>
  );
}

/**
 * The program at a glance for a period (the last 30 days at first): the affiliates, referrals and
 * sales the API counted (GET /reports/summary), money per currency, and daily charts.
 */
export function Overview({ client, can }: PageProps) {
  const [range, setRange] = useState(() => lastDays(DEFAULT_DAYS));
  const data = useLoad(() => ok(client.GET('/api/v1/reports/summary', { params: { query: periodOf(range) } })), [range.from, range.to]);
  return (
    <section>
      <h1>Program overview</h1>
      <RangePicker range={range} error={data.error} onChange={setRange} />
      {can('getProgramSummary') ? null : <Notice>Your role cannot read the program's summary.</Notice>}
      {/* A refused range shows no figures: those of the period before would read as the answer to it. */}
      {data.error ? null : data.value ? (
        <>
          <p class="period">
            {dayAt(Date.parse(data.value.from))} to {dayAt(Date.parse(data.value.to) - 1)} (UTC days, both included)
          </p>
          <Figures summary={data.value} />
        </>
      ) : (
        <p>Loading…</p>
      )}
    </section>
  );
}
