import { CSV_COLUMNS, type AffiliateReportRow, type Statement } from '@affiliate/contracts';
import { csvText, fromMinorUnits, minorUnitDigits, sendCsv } from '@affiliate/platform';
import type { Response } from 'express';
import type { PayoutDocument } from '../../data-access/payouts';

/** What a mass-payout tool takes: who, how, how much. The IBAN in full: this file is for paying. */
export function sendPayoutsCsv(response: Response, filename: string, payouts: PayoutDocument[]): void {
  const rows = payouts.map((payout) => {
    const details = payout.payee.payoutDetails;
    return [
      payout._id,
      payout.affiliateId,
      csvText(payout.payee.name),
      csvText(payout.payee.email),
      details?.method ?? '',
      csvText(details?.email),
      csvText(details?.accountHolder),
      csvText(details?.iban),
      csvText(details?.note),
      fromMinorUnits(payout.amountMinor, payout.currency).toFixed(minorUnitDigits(payout.currency)),
      payout.currency,
      payout.status,
    ];
  });
  sendCsv(response, filename, CSV_COLUMNS.payouts, rows);
}

export function sendReportCsv(response: Response, rows: AffiliateReportRow[]): void {
  sendCsv(
    response,
    'affiliate-report.csv',
    CSV_COLUMNS.affiliateReport,
    rows.map((row) => [
      row.affiliateId,
      csvText(row.name),
      csvText(row.email),
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

/**
 * A statement as rows: the opening balance, every entry, the closing balance. The payout id may be
 * the integrator's own (PUT /sales), and a description embeds it or a payout's external reference:
 * both cells are guarded whole, so neither can start a formula.
 */
export function sendStatementCsv(response: Response, statement: Statement): void {
  const balance = (type: string, at: string, amount: number) => [type, at, amount, statement.currency, '', '', '', ''];
  sendCsv(response, `statement-${statement.affiliateId}-${statement.currency}.csv`, CSV_COLUMNS.statement, [
    balance('OPENING_BALANCE', statement.from, statement.openingBalance),
    ...statement.entries.map((entry) => [
      entry.type,
      entry.at,
      entry.amount,
      statement.currency,
      entry.saleId ?? '',
      entry.commissionId ?? '',
      csvText(entry.payoutId),
      csvText(entry.description),
    ]),
    balance('CLOSING_BALANCE', statement.to, statement.closingBalance),
  ]);
}
