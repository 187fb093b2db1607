import type { AffiliateReportRow } from '@affiliate/contracts';
import { fromMinorUnits, minorUnitDigits } from '@affiliate/platform';
import { stringify } from 'csv-stringify/sync';
import type { Request, Response } from 'express';
import type { PayoutDocument } from '../../data-access/payouts';

/** True when the client asked for CSV (Accept: text/csv) rather than JSON. */
export const wantsCsv = (request: Request): boolean => request.accepts(['application/json', 'text/csv']) === 'text/csv';

/**
 * A text cell a spreadsheet must not run: one starting with = + - @ or a control character is
 * prefixed with an apostrophe (OWASP, CSV injection). Names and notes come from integrators' users.
 */
const text = (value: string | null | undefined): string => {
  const cell = value ?? '';
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
};

export function sendCsv(response: Response, filename: string, columns: string[], rows: (string | number)[][]): void {
  response.type('text/csv; charset=utf-8');
  response.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  response.send(stringify([columns, ...rows], { record_delimiter: '\r\n' }));
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

export function sendReportCsv(response: Response, rows: AffiliateReportRow[]): void {
  const columns = ['affiliate_id', 'name', 'email', 'clicks', 'referrals', 'sales', 'revenue', 'commission_earned', 'commission_due', 'commission_paid'];
  sendCsv(
    response,
    'affiliate-report.csv',
    columns,
    rows.map((row) => [row.affiliateId, text(row.name), text(row.email), row.clicks, row.referrals, row.sales, row.revenue, row.commissionEarned, row.commissionDue, row.commissionPaid]),
  );
}
