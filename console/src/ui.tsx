import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { ApiError } from './api';
import { AffiliateApiError } from './client';

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** An API error as a person reads it: the API's own message, never a blank page. */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const status = (error instanceof ApiError || error instanceof AffiliateApiError) && error.status > 0 ? ` (${error.status})` : '';
  return (
    <p class="error" role="alert">
      {messageOf(error)}
      {status}
    </p>
  );
}

/** A secret or a link shown this once, with a button to copy it. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="notice" role="status">
      <p>{label}</p>
      <code class="secret">{value}</code>{' '}
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false),
          );
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

/** Runs `load` when its inputs change; the page shows what it got, or its error. */
export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]): { value: T | undefined; error: unknown; reload: () => void } {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setError(null);
    load().then(
      (loaded) => current && setValue(loaded),
      (failed: unknown) => current && setError(failed),
    );
    return () => {
      current = false;
    };
  }, [...inputs, round]);
  return { value, error, reload: () => setRound((n) => n + 1) };
}

/** A button whose action may fail: the failure is shown beside it. */
export function Action({ label, run, kind }: { label: string; run: () => Promise<unknown>; kind?: 'danger' }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <span class="action">
      <button
        type="button"
        class={kind}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await run();
          } catch (failed) {
            setError(failed);
          } finally {
            setBusy(false);
          }
        }}
      >
        {label}
      </button>
      <ErrorBanner error={error} />
    </span>
  );
}

export type Column<T> = { title: string; value: (row: T) => ComponentChildren };

export function Table<T>({ caption, rows, columns, empty }: { caption: string; rows: T[]; columns: Column<T>[]; empty?: string }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column.title}>
              {column.title}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={columns.length}>{empty ?? 'Nothing here yet.'}</td>
          </tr>
        ) : (
          rows.map((row, index) => (
            <tr key={index}>
              {columns.map((column) => (
                <td key={column.title}>{column.value(row)}</td>
              ))}
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

/** The API's pagination: back to the first page, or on to the page after `next` (from the Link header). */
export function Pager({
  cursor,
  next,
  onPage,
}: {
  cursor: string | null;
  next: string | null | undefined;
  onPage: (cursor: string | null) => void;
}) {
  return (
    <div class="pager">
      {cursor ? (
        <button type="button" onClick={() => onPage(null)}>
          First page
        </button>
      ) : null}
      {next ? (
        <button type="button" onClick={() => onPage(next)}>
          Next page
        </button>
      ) : null}
    </div>
  );
}

export const Json = ({ value, label }: { value: unknown; label: string }) => (
  <pre tabIndex={0} aria-label={label}>
    {JSON.stringify(value, null, 2)}
  </pre>
);

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC' : '—');

/** A line chart (uPlot, bundled) of daily figures; a text summary beside it for screen readers. */
export function Chart({
  title,
  days,
  series,
}: {
  title: string;
  days: number[];
  series: { label: string; values: number[]; color: string }[];
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!holder.current) return;
    const plot = new uPlot(
      {
        width: 560,
        height: 220,
        series: [{}, ...series.map((each) => ({ label: each.label, stroke: each.color, width: 2 }))],
        axes: [{}, {}],
        legend: { show: true },
      },
      [days, ...series.map((each) => each.values)],
      holder.current,
    );
    return () => plot.destroy();
  }, [days, series]);
  const totals = series.map((each) => `${each.label}: ${round(each.values.reduce((sum, value) => sum + value, 0))}`).join('; ');
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} role="img" aria-label={`${title}. Over the period: ${totals}`} />
    </figure>
  );
}

export const round = (value: number) => Math.round(value * 100) / 100;

/** A form whose submission may fail: `run` does the work; the form shows the error, or that it was done. */
export function useSubmit(run: () => Promise<unknown>) {
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setDone(false);
    try {
      await run();
      setDone(true);
    } catch (failed) {
      setError(failed);
    }
  };
  return { error, done, submit };
}
