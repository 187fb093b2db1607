import { CommissionStatus } from './commission';
import { Currency, dateRange, DateTime, ListFormat, ListQuery, Uuid, withoutControlCharacters } from './common';
import { Risk } from './risk';
import { Commission } from './sale';
import { z } from './zod';

const ReviewText = withoutControlCharacters(z.string().trim().min(1).max(500));

export const ReleaseCommissionBody = z
  .object({
    saleId: Uuid.openapi({ description: 'The sale of the commission' }),
    commissionId: Uuid.openapi({ description: 'The HELD commission to release' }),
    note: ReviewText.optional().openapi({
      description: "The reviewer's note, kept with the decision (at most 500 characters, no line breaks)",
    }),
  })
  .strict()
  .openapi('ReleaseCommissionBody');

export const VoidCommissionBody = z
  .object({
    saleId: Uuid.openapi({ description: 'The sale of the commission' }),
    commissionId: Uuid.openapi({ description: 'The commission to void' }),
    reason: ReviewText.openapi({ description: 'Why, kept with the decision (1 to 500 characters, no line breaks)' }),
  })
  .strict()
  .openapi('VoidCommissionBody');

export const CommissionQuery = ListQuery.extend({
  status: CommissionStatus.optional().openapi({ description: 'Only commissions of this status (HELD: the review queue)' }),
  affiliateId: Uuid.optional().openapi({ description: 'Only the commissions of this affiliate' }),
  currency: Currency.optional().openapi({ description: 'Only the commissions in this currency' }),
  ...dateRange('createdAt', "sale's recording"),
  ...dateRange('paidAt', "sale's payment (paidAt)"),
  format: ListFormat,
}).strict();

/** GET /commissions: each commission with its sale and the sale's risk signals (what a reviewer decides on). */
export const CommissionListItem = Commission.extend({
  saleId: Uuid.openapi({ description: 'The sale the commission belongs to' }),
  risk: Risk.openapi({ description: "The sale's risk signals and the action they led to: what a reviewer decides on" }),
}).openapi('CommissionListItem', { description: "A commission with its sale's id and risk signals" });

export const STATEMENT_ENTRY_TYPES = ['EARNED', 'HELD', 'RELEASED', 'VOIDED', 'ADJUSTED', 'PAID_OUT'] as const;

export const StatementQuery = z
  .object({
    affiliateId: Uuid.openapi({ description: 'The affiliate' }),
    currency: Currency.openapi({ description: 'The currency of the statement (one statement per currency)' }),
    from: DateTime.openapi({ description: 'Start of the period; the opening balance is everything before it' }),
    to: DateTime.optional().openapi({ description: 'End of the period, excluded (default: now)' }),
    format: z.enum(['json', 'csv']).optional().openapi({ description: 'csv: the entries as a CSV file (also with Accept: text/csv)' }),
  })
  .strict();

export const StatementEntry = z
  .object({
    type: z.enum(STATEMENT_ENTRY_TYPES).openapi({
      description:
        'EARNED: a commission earned; HELD: held for review; RELEASED: released after review; VOIDED: voided; ADJUSTED: taken back after a reversal; PAID_OUT: paid in a payout',
    }),
    at: DateTime.openapi({ description: 'When it happened' }),
    amount: z.number().openapi({ description: 'What the entry adds to the balance the program owes the affiliate (negative: taken away)' }),
    saleId: Uuid.nullable().openapi({ description: 'The sale of the entry; null for none' }),
    commissionId: Uuid.nullable().openapi({ description: 'The commission of the entry; null for none' }),
    payoutId: z.string().nullable().openapi({
      description:
        "The payout of a PAID_OUT entry: a payout run's id, or the payoutId PUT /sales marked the commission with (a payout made outside the runs, any string)",
    }),
    description: z.string().openapi({ description: 'The entry in words, as the CSV shows it' }),
  })
  .openapi('StatementEntry', { description: "One movement of the affiliate's balance" });

export const Statement = z
  .object({
    affiliateId: Uuid.openapi({ description: 'The affiliate' }),
    currency: z.string().openapi({ description: 'ISO 4217 code of every amount' }),
    from: DateTime.openapi({ description: 'Start of the period' }),
    to: DateTime.openapi({ description: 'End of the period, excluded' }),
    openingBalance: z
      .number()
      .openapi({ description: 'What the program owed the affiliate at `from`: earned and not held, voided or paid out' }),
    entries: z.array(StatementEntry).openapi({ description: 'Every entry of the period, oldest first' }),
    closingBalance: z.number().openapi({
      description:
        'openingBalance plus the sum of the entries; negative when a refund after a payout took back more than was earned since (the next payout offsets it)',
    }),
  })
  .openapi('Statement', { description: "An affiliate's account with the program in one currency over a period" });

export type ReleaseCommissionBody = z.infer<typeof ReleaseCommissionBody>;
export type VoidCommissionBody = z.infer<typeof VoidCommissionBody>;
export type CommissionListItem = z.infer<typeof CommissionListItem>;
export type StatementEntry = z.infer<typeof StatementEntry>;
export type Statement = z.infer<typeof Statement>;
