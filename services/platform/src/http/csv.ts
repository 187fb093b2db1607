import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { stringify as stringifyAll } from 'csv-stringify/sync';
import type { Request, Response } from 'express';

/** True when the client asked for CSV (Accept: text/csv) rather than JSON. */
export const wantsCsv = (request: Request): boolean => request.accepts(['application/json', 'text/csv']) === 'text/csv';

/** A list answers CSV with `format=csv`, or with `Accept: text/csv` when no format is named. */
export const listWantsCsv = (request: Request, format: unknown): boolean => format === 'csv' || (format === undefined && wantsCsv(request));

/**
 * Where a spreadsheet would start a formula: at the start of the cell and after every line break in
 * it (CR, LF or CRLF), since a tool that reads line by line starts a row there. A line starting with
 * = + - @ or a tab (OWASP, CSV injection) is one. CR is a line break here, not a line's first
 * character: "\r=1" is an empty line, then the line "=1", which is prefixed.
 */
const FORMULA_START = /(^|\r\n|\r|\n)(?=[=+\-@\t])/g;

/**
 * A text cell a spreadsheet must not run: every line of it that starts like a formula is prefixed
 * with an apostrophe, and so is a cell that starts with CR (OWASP's list). Names and notes come from
 * integrators' users; input refuses control characters now, but what was stored before is written
 * here too.
 */
export const csvText = (value: string | null | undefined): string => {
  const defused = (value ?? '').replace(FORMULA_START, "$1'");
  return defused.startsWith('\r') ? `'${defused}` : defused;
};

export type CsvRow = (string | number)[];

// Every field quoted: a line break inside a cell (a lone LF is not the record delimiter, so
// csv-stringify would leave it bare) stays inside its cell instead of starting a row.
const CSV_OPTIONS = { record_delimiter: '\r\n', quoted: true, quoted_empty: true } as const;

function startCsv(response: Response, filename: string): void {
  response.type('text/csv; charset=utf-8');
  response.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
}

/** A small CSV built whole (one payout, one report): header row, then the rows. */
export function sendCsv(response: Response, filename: string, columns: readonly string[], rows: CsvRow[]): void {
  startCsv(response, filename);
  response.send(stringifyAll([columns, ...rows], CSV_OPTIONS));
}

/**
 * A CSV of any length: the header row, then each row as the cursor behind `rows` yields it, written
 * as the client reads (backpressure), so memory is one batch of the cursor however many rows match.
 * Once the header is out the status is sent: a failure later ends the file short (the connection is
 * cut, so the client sees an incomplete transfer, never a file that looks whole).
 */
export async function streamCsv(
  response: Response,
  filename: string,
  columns: readonly string[],
  rows: AsyncIterable<CsvRow>,
): Promise<void> {
  startCsv(response, filename);
  async function* withHeader() {
    yield columns;
    yield* rows;
  }
  try {
    await pipeline(Readable.from(withHeader()), stringify(CSV_OPTIONS), response);
  } catch (error) {
    // pipeline has destroyed the response (the client went away, or the cursor failed after the
    // status was sent): the transfer ends incomplete. Before anything was sent, the error is answered.
    if (!response.headersSent && !response.destroyed) throw error;
  }
}
