import type { AffiliateReportRow, Statement } from '@affiliate/contracts';
import { fromMinorUnits, minorUnitDigits } from '@affiliate/platform';
import { stringify } from 'csv-stringify/sync';
import type { Request, Response } from 'express';
import type { PayoutDocument } from '../../data-access/payouts';

/** True when the client asked for CSV (Accept: text/csv) rather than JSON. */
export const wantsCsv = (request: Request): boolean => request.accepts(['application/json', 'text/csv']) === 'text/csv';

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
const text = (value: string | null | undefined): string => {
  const defused = (value ?? '').replace(FORMULA_START, "$1'");
  return defused.startsWith('\r') ? `'${defused}` : defused;
};

export function sendCsv(response: Response, filename: string, columns: string[], rows: (string | number)[][]): void {
  response.type('text/csv; charset=utf-8');
  response.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  // Every field quoted: a line break inside a cell (a lone LF is not the record delimiter, so
  // csv-stringify would leave it bare) stays inside its cell instead of starting a row.
  response.send(stringify([columns, ...rows], { record_delimiter: '\r\n', quoted: true, quoted_empty: true }));
}

/** What a mass-payout tool takes: who, how, how much. The IBAN in full: this file is for paying. */
export function sendPayoutsCsv(response: Response, filename: string, payouts: PayoutDocument[]): void {
  const columns = ['payout_id', 'affiliate_id', 'name', 'email', 'payout_method', 'payout_email', 'account_holder', 'iban', 'note', 'amount', 'currency', 'status'];
  const rows = payouts.map((payout) => {
    const details = payout.payee.payoutDetails;
    return [
      payout._id,
      payout.affiliateId,
      text(payout.payee.name),
      text(payout.payee.email),
      details?.method ?? '',
      text(details?.email),
      text(details?.accountHolder),
      text(details?.iban),
      text(details?.note),
      fromMinorUnits(payout.amountMinor, payout.currency).toFixed(minorUnitDigits(payout.currency)),
      payout.currency,
      payout.status,
    ];
  });
  sendCsv(response, filename, columns, rows);
}

/** One row per affiliate and currency (AffiliateReportRow). */
export const REPORT_CSV_COLUMNS = [
  'affiliate_id',
  'name',
  'email',
  'currency',
  'clicks',
  'referrals',
  'sales',
  'revenue',
  'commission_earned',
  'commission_pending',
  'commission_held',
  'commission_due',
  'commission_paid',
  'commission_voided',
];

export function sendReportCsv(response: Response, rows: AffiliateReportRow[]): void {
  sendCsv(
    response,
    'affiliate-report.csv',
    REPORT_CSV_COLUMNS,
    rows.map((row) => [
      row.affiliateId,
      text(row.name),
      text(row.email),
      row.currency,
      row.clicks,
      row.referrals,
      row.sales,
      row.revenue,
      row.commissionEarned,
      row.commissionPending,
      row.commissionHeld,
      row.commissionDue,
      row.commissionPaid,
      row.commissionVoided,
    ]),
  );
}

/** A statement as rows: the opening balance, every entry, the closing balance (descriptions are text: never a formula). */
export function sendStatementCsv(response: Response, statement: Statement): void {
  const columns = ['type', 'at', 'amount', 'currency', 'sale_id', 'commission_id', 'payout_id', 'description'];
  const balance = (type: string, at: string, amount: number) => [type, at, amount, statement.currency, '', '', '', ''];
  sendCsv(response, `statement-${statement.affiliateId}-${statement.currency}.csv`, columns, [
    balance('OPENING_BALANCE', statement.from, statement.openingBalance),
    ...statement.entries.map((entry) => [entry.type, entry.at, entry.amount, statement.currency, entry.saleId ?? '', entry.commissionId ?? '', entry.payoutId ?? '', text(entry.description)]),
    balance('CLOSING_BALANCE', statement.to, statement.closingBalance),
  ]);
}
