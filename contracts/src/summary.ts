import { AffiliateStatus } from './affiliate';
import { MAX_REPORT_PERIOD_DAYS } from './commission';
import { DateTime } from './common';
import { z } from './zod';

/**
 * The overview of a program (issue 32): GET /api/v1/reports/summary. The sale service answers it,
 * asking the affiliate and referral services for their parts (docs/summary.md).
 */
/** The summary's period when it names none: the last SUMMARY_DEFAULT_DAYS days up to `to` (or now). */
export const SUMMARY_DEFAULT_DAYS = 30;

/** GET /reports/summary: a period [from, to) of at most MAX_REPORT_PERIOD_DAYS; both may be left out. */
export const SummaryQuery = z
  .object({
    from: DateTime.optional().openapi({
      description: `Start of the period, included (default: ${SUMMARY_DEFAULT_DAYS} days before \`to\`); the period spans at most ${MAX_REPORT_PERIOD_DAYS} days`,
    }),
    to: DateTime.optional().openapi({ description: 'End of the period, excluded (default: now)' }),
  })
  .strict();

const Count = (description: string) => z.number().int().nonnegative().openapi({ description });
const UtcDay = z.string().openapi({ description: 'A UTC day, YYYY-MM-DD', example: '2025-01-15' });

/** One currency's sales of the period, and the same per UTC day: nothing ever adds two currencies. */
export const CurrencySummary = z
  .object({
    currency: z.string().openapi({ description: "ISO 4217 code of this entry's money figures" }),
    sales: Count('Live sales paid in the period in this currency (a reversed sale no longer counts)'),
    revenue: z
      .number()
      .openapi({ description: "Their totalEarned added up, in currency, as a decimal rounded to the currency's minor unit" }),
    commission: z.number().openapi({
      description:
        "The commissions of those sales in this currency (a FLAT plan's commission is in the plan's currency, so it may sit in another entry than its sale), all but VOID ones, adjustments included",
    }),
    daily: z
      .array(
        z.object({
          day: UtcDay,
          sales: Count('Sales paid that day in this currency'),
          revenue: z.number().openapi({ description: 'Their revenue' }),
          commission: z.number().openapi({ description: 'Their commission in this currency' }),
        }),
      )
      .openapi({ description: 'Every UTC day the period touches, oldest first, zeros included (for charts)' }),
  })
  .openapi('CurrencySummary');

const CreatedPerDay = z
  .array(z.object({ day: UtcDay, created: Count('Created that day') }))
  .openapi({ description: 'Every UTC day the period touches, oldest first, zeros included (for charts)' });

/**
 * The program at a glance, counted and summed by the database over the whole program (never a page
 * of a list): the affiliates by status, the referrals, and the sales of the period per currency.
 */
export const ProgramSummary = z
  .object({
    from: DateTime.openapi({ description: 'Start of the period, included' }),
    to: DateTime.openapi({ description: 'End of the period, excluded' }),
    affiliates: z
      .object({
        total: Count('Every affiliate of the program, whatever its status'),
        created: Count('Affiliates created in the period'),
        byStatus: z
          .array(
            z.object({
              status: AffiliateStatus.openapi({ description: 'The status' }),
              total: Count('Affiliates of this status now'),
              created: Count('Of them, created in the period'),
            }),
          )
          .openapi({ description: 'Every status, in the order PENDING, ACTIVE, REJECTED, DISABLED' }),
        daily: CreatedPerDay,
      })
      .openapi({ description: 'The affiliates: every one of the program, and those created in the period' }),
    referrals: z
      .object({
        total: Count('Every referral of the program'),
        created: Count('Referrals created in the period'),
        daily: CreatedPerDay,
      })
      .openapi({ description: 'The referrals: every one of the program, and those created in the period' }),
    sales: z
      .object({
        count: Count('Live sales paid in the period, every currency (a count, never money)'),
        byCurrency: z.array(CurrencySummary).openapi({
          description:
            "One entry per currency with sales or commissions in the period, the program's reportingCurrency first (always there, zeros without sales), then the others alphabetically",
        }),
      })
      .openapi({ description: 'The live sales paid in the period, with their money per currency' }),
  })
  .openapi('ProgramSummary');

/** Internal (affiliate service): GET /internal/affiliate-summary?from&to, the affiliates' part of the summary. */
export const InternalSummaryQuery = z.object({ from: DateTime, to: DateTime }).strict();
export const AffiliatesSummary = ProgramSummary.shape.affiliates.extend({
  /** The program's reporting currency, which the summary lists first. */
  reportingCurrency: z.string(),
});
/** Internal (referral service): GET /internal/referral-summary?from&to. */
export const ReferralsSummary = ProgramSummary.shape.referrals;

export type ProgramSummary = z.infer<typeof ProgramSummary>;
export type CurrencySummary = z.infer<typeof CurrencySummary>;
export type AffiliatesSummary = z.infer<typeof AffiliatesSummary>;
export type ReferralsSummary = z.infer<typeof ReferralsSummary>;
