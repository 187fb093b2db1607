import { CommissionStatus } from './commission';
import { Currency, dateRange, DateTime, ListFormat, ListQuery, Uuid, withoutControlCharacters } from './common';
import { Risk } from './risk';
import { Commission } from './sale';
import { z } from './zod';

const ReviewText = withoutControlCharacters(z.string().trim().min(1).max(500));

export const ReleaseCommissionBody = z
  .object({ saleId: Uuid, commissionId: Uuid, note: ReviewText.optional() })
  .strict()
  .openapi('ReleaseCommissionBody');

export const VoidCommissionBody = z
  .object({ saleId: Uuid, commissionId: Uuid, reason: ReviewText })
  .strict()
  .openapi('VoidCommissionBody');

export const CommissionQuery = ListQuery.extend({
  status: CommissionStatus.optional(),
  affiliateId: Uuid.optional(),
  currency: Currency.optional().openapi({ description: "Only the commissions in this currency" }),
  ...dateRange('createdAt', "sale's recording"),
  format: ListFormat,
}).strict();

/** GET /commissions: each commission with its sale and the sale's risk signals (what a reviewer decides on). */
export const CommissionListItem = Commission.extend({ saleId: Uuid, risk: Risk }).openapi('CommissionListItem');

export const STATEMENT_ENTRY_TYPES = ['EARNED', 'HELD', 'RELEASED', 'VOIDED', 'ADJUSTED', 'PAID_OUT'] as const;

export const StatementQuery = z
  .object({
    affiliateId: Uuid,
    currency: Currency,
    from: DateTime.openapi({ description: 'Start of the period; the opening balance is everything before it' }),
    to: DateTime.optional().openapi({ description: 'End of the period, excluded (default: now)' }),
    format: z.enum(['json', 'csv']).optional().openapi({ description: 'csv: the entries as a CSV file (also with Accept: text/csv)' }),
  })
  .strict();

export const StatementEntry = z
  .object({
    type: z.enum(STATEMENT_ENTRY_TYPES),
    at: DateTime,
    amount: z.number().openapi({ description: 'What the entry adds to the balance the program owes the affiliate (negative: taken away)' }),
    saleId: Uuid.nullable(),
    commissionId: Uuid.nullable(),
    payoutId: z
      .string()
      .nullable()
      .openapi({ description: "The payout of a PAID_OUT entry: a payout run's id, or the payoutId PUT /sales marked the commission with (a payout made outside the runs, any string)" }),
    description: z.string(),
  })
  .openapi('StatementEntry');

export const Statement = z
  .object({
    affiliateId: Uuid,
    currency: z.string(),
    from: DateTime,
    to: DateTime,
    openingBalance: z.number().openapi({ description: 'What the program owed the affiliate at `from`: earned and not held, voided or paid out' }),
    entries: z.array(StatementEntry),
    closingBalance: z.number().openapi({ description: 'openingBalance plus the sum of the entries; negative when a refund after a payout took back more than was earned since (the next payout offsets it)' }),
  })
  .openapi('Statement');

export type ReleaseCommissionBody = z.infer<typeof ReleaseCommissionBody>;
export type VoidCommissionBody = z.infer<typeof VoidCommissionBody>;
export type CommissionListItem = z.infer<typeof CommissionListItem>;
export type StatementEntry = z.infer<typeof StatementEntry>;
export type Statement = z.infer<typeof Statement>;
