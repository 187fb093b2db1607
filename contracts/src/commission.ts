import { Amount, Currency, dateRange, DateTime, Email, ListQuery, ShortText, Uuid, withoutControlCharacters } from './common';
import { z } from './zod';

/**
 * Commission plans (issue 16, DESIGN.md section 9). A plan's `rate` is a percentage of the sale's
 * `totalEarned` for PERCENTAGE plans and an amount in the plan's `currency` per sale for FLAT plans;
 * `firstPaymentRate` and every tier's `rate` are read the same way.
 */
export const CommissionType = z.enum(['PERCENTAGE', 'FLAT']);
export const RecurringRule = z.enum(['ONCE', 'FOREVER', 'LIMITED']);
export const TierMetric = z.enum(['SALES_COUNT', 'REVENUE']);

const Rate = z.number().finite().nonnegative().max(1e9);
const MAX_TIERS = 10;
export const DEFAULT_HOLD_DAYS = 30;

const COMMISSION_TYPE =
  "PERCENTAGE: rate is a percentage of the sale's totalEarned; FLAT: rate is an amount in the plan's currency per sale";
const RATE = 'The commission: a percentage (0 to 100) for PERCENTAGE plans, an amount in currency per sale for FLAT plans';
const RECURRING_MONTHS =
  "LIMITED plans only: months after the customer's first commissioned payment during which recurring payments earn (1 to 120)";
const TIERS =
  'Higher rates once the affiliate reaches a threshold (at most 10, thresholds increasing, one metric for all); the highest reached applies';

export const CommissionTierRule = z
  .object({
    metric: TierMetric.openapi({ description: "SALES_COUNT: the affiliate's sales; REVENUE: their total revenue" }),
    threshold: z
      .number()
      .finite()
      .positive()
      .max(1e12)
      .openapi({ description: 'The count of sales (a whole number) or the revenue from which this tier applies' }),
    rate: Rate.openapi({ description: "The tier's rate, read as the plan's rate" }),
  })
  .strict()
  .openapi('CommissionTierRule', { description: 'One tier of a plan: its rate applies once the affiliate reaches the threshold' });

const planTerms = {
  name: ShortText.openapi({ description: "The plan's name" }),
  commissionType: CommissionType.openapi({ description: COMMISSION_TYPE }),
  rate: Rate.openapi({ description: RATE }),
  currency: Currency.optional().openapi({ description: 'FLAT plans only: the currency of rate' }),
  firstPaymentRate: Rate.optional().openapi({ description: "The rate of a customer's first commissioned payment" }),
  recurring: RecurringRule.openapi({
    description: 'Recurring payments earn: ONCE never, FOREVER always, LIMITED within recurringMonths of the first',
  }),
  recurringMonths: z.number().int().min(1).max(120).optional().openapi({ description: RECURRING_MONTHS }),
  holdDays: z
    .number()
    .int()
    .min(0)
    .max(365)
    .default(DEFAULT_HOLD_DAYS)
    .openapi({ description: 'Days a commission is held (PENDING) before it is DUE' }),
  minimumPayout: Amount.optional().openapi({ description: "A payout is created only once the affiliate's due total reaches it" }),
  tiers: z
    .array(CommissionTierRule)
    .max(MAX_TIERS)
    .default([])
    .openapi({ description: `${TIERS} (default none)` }),
  isDefault: z.boolean().optional().openapi({ description: 'The plan of every affiliate without one of their own' }),
};

export type PlanTerms = {
  commissionType: z.infer<typeof CommissionType>;
  rate: number;
  currency?: string | null;
  firstPaymentRate?: number | null;
  recurring: z.infer<typeof RecurringRule>;
  recurringMonths?: number | null;
  tiers: z.infer<typeof CommissionTierRule>[];
};

/** The rules across fields, for a new plan and for a plan after a change alike. */
export function planTermsProblem(plan: PlanTerms): { path: string; message: string } | null {
  const rates = [plan.rate, plan.firstPaymentRate ?? 0, ...plan.tiers.map((tier) => tier.rate)];
  if (plan.commissionType === 'PERCENTAGE') {
    if (rates.some((rate) => rate > 100))
      return { path: 'rate', message: 'rate: a PERCENTAGE rate (also firstPaymentRate and tier rates) is at most 100' };
    if (plan.currency)
      return {
        path: 'currency',
        message: 'currency: only FLAT plans have a currency (a PERCENTAGE commission is in the currency of the sale)',
      };
  } else if (!plan.currency) {
    return { path: 'currency', message: 'currency is required for a FLAT plan' };
  }
  if (plan.recurring === 'LIMITED' && !plan.recurringMonths)
    return { path: 'recurringMonths', message: 'recurringMonths is required when recurring is LIMITED' };
  if (plan.recurring !== 'LIMITED' && plan.recurringMonths)
    return { path: 'recurringMonths', message: 'recurringMonths: only LIMITED plans have recurringMonths' };
  const metrics = new Set(plan.tiers.map((tier) => tier.metric));
  if (metrics.size > 1) return { path: 'tiers', message: 'tiers: every tier of a plan uses the same metric' };
  for (const [index, tier] of plan.tiers.entries()) {
    if (tier.metric === 'SALES_COUNT' && !Number.isInteger(tier.threshold))
      return { path: 'tiers', message: `tiers.${index}.threshold: a SALES_COUNT threshold is a whole number` };
    const previous = plan.tiers[index - 1];
    if (previous && tier.threshold <= previous.threshold)
      return { path: 'tiers', message: `tiers.${index}.threshold: thresholds must increase from one tier to the next` };
  }
  return null;
}

const checkTerms = (plan: PlanTerms, ctx: z.RefinementCtx) => {
  const problem = planTermsProblem(plan);
  if (problem) ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message });
};

export const CreateCommissionPlanBody = z.object(planTerms).strict().superRefine(checkTerms).openapi('CreateCommissionPlanBody');

export const UpdateCommissionPlanBody = z
  .object({
    commissionPlanId: Uuid.openapi({ description: 'The plan to change' }),
    name: planTerms.name.optional().openapi({ description: "The plan's name" }),
    commissionType: CommissionType.optional().openapi({ description: COMMISSION_TYPE }),
    rate: Rate.optional().openapi({ description: RATE }),
    currency: Currency.nullable().optional().openapi({ description: 'FLAT plans only: the currency of rate; null clears it' }),
    firstPaymentRate: Rate.nullable()
      .optional()
      .openapi({ description: "The rate of a customer's first commissioned payment; null: the plan's rate" }),
    recurring: RecurringRule.optional().openapi({
      description: 'Recurring payments earn: ONCE never, FOREVER always, LIMITED within recurringMonths of the first',
    }),
    recurringMonths: planTerms.recurringMonths.unwrap().nullable().optional().openapi({ description: RECURRING_MONTHS }),
    holdDays: z
      .number()
      .int()
      .min(0)
      .max(365)
      .optional()
      .openapi({ description: 'Days a commission is held (PENDING) before it is DUE, 0 to 365' }),
    minimumPayout: Amount.nullable()
      .optional()
      .openapi({ description: "A payout is created only once the affiliate's due total reaches it; null: no minimum" }),
    tiers: z
      .array(CommissionTierRule)
      .max(MAX_TIERS)
      .optional()
      .openapi({ description: `${TIERS}; replaces the list` }),
    isDefault: z
      .boolean()
      .optional()
      .openapi({ description: "true: the program's default plan from now on; false: no longer the default" }),
  })
  .strict()
  .openapi('UpdateCommissionPlanBody', {
    description: 'Fields left out keep their value, null clears an optional one; the plan after the change obeys the same rules',
  });

export const DeleteCommissionPlanBody = z
  .object({ commissionPlanId: Uuid.openapi({ description: 'The plan to delete' }) })
  .strict()
  .openapi('DeleteCommissionPlanBody');

export const CommissionPlan = z
  .object({
    id: Uuid.openapi({ description: "The plan's id" }),
    name: z.string().openapi({ description: "The plan's name" }),
    commissionType: CommissionType.openapi({ description: COMMISSION_TYPE }),
    rate: z.number().openapi({ description: RATE }),
    currency: z
      .string()
      .nullable()
      .openapi({ description: 'FLAT plans: the currency of rate; PERCENTAGE plans: null (the commission is in the currency of the sale)' }),
    firstPaymentRate: z
      .number()
      .nullable()
      .openapi({ description: "The rate of a customer's first commissioned payment; null: the plan's rate" }),
    recurring: RecurringRule.openapi({
      description: 'Recurring payments earn: ONCE never, FOREVER always, LIMITED within recurringMonths of the first',
    }),
    recurringMonths: z
      .number()
      .int()
      .nullable()
      .openapi({ description: `${RECURRING_MONTHS}; else null` }),
    holdDays: z.number().int().openapi({ description: 'Days a commission is held (PENDING) before it is DUE' }),
    minimumPayout: z
      .number()
      .nullable()
      .openapi({ description: "A payout is created only once the affiliate's due total reaches it; null: no minimum" }),
    tiers: z.array(CommissionTierRule).openapi({ description: TIERS }),
    isDefault: z.boolean().openapi({ description: 'Whether it is the plan of every affiliate without one of its own' }),
    programId: Uuid.openapi({ description: 'The program' }),
    createdAt: DateTime.openapi({ description: 'When the plan was created' }),
    updatedAt: DateTime.openapi({ description: 'When it last changed' }),
  })
  .openapi('CommissionPlan', {
    description: 'How affiliates on it earn: a rate per sale, recurring rules, a hold before commissions are due, and tiers',
  });

export const CommissionPlanQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'A plan id: that plan' }),
}).strict();

/** On an affiliate: the plan it earns by (its own, else the program's default) and the tier reached on it. */
export const CommissionPlanSummary = z
  .object({ id: Uuid.openapi({ description: "The plan's id" }), name: z.string().openapi({ description: "The plan's name" }) })
  .openapi('CommissionPlanSummary', {
    description: "The plan the affiliate earns by: its own, else the program's default; null while it earns its own commissionRate",
  });
export const CommissionTier = z
  .object({
    level: z.number().int().min(1).openapi({ description: 'The tier reached, from 1 (the first tier of the plan)' }),
    metric: TierMetric.openapi({ description: "SALES_COUNT: the affiliate's sales; REVENUE: their total revenue" }),
    threshold: z.number().openapi({ description: "The tier's threshold" }),
    rate: z.number().openapi({ description: "The tier's rate, read as the plan's rate" }),
  })
  .openapi('CommissionTier', { description: 'The highest tier of the plan the affiliate has reached; null while on the base rate' });

export const PayoutMethod = z.enum(['PAYPAL', 'BANK_TRANSFER', 'WISE', 'OTHER']);

export const PayoutDetailsBody = z
  .object({
    method: PayoutMethod.openapi({
      description: 'How the affiliate is paid: PAYPAL and WISE need email, BANK_TRANSFER needs iban and accountHolder',
    }),
    email: Email.optional().openapi({ description: 'The PayPal or Wise account email' }),
    accountHolder: ShortText.optional().openapi({ description: 'The name on the bank account' }),
    iban: z
      .string()
      .transform((value) => value.replace(/\s+/g, '').toUpperCase())
      .pipe(z.string().regex(/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/, 'must be an IBAN (country code, check digits, account)'))
      .optional()
      .openapi({
        description: 'The bank account (spaces allowed, stored upper case without them); shown afterwards by its last 4 characters only',
      }),
    note: withoutControlCharacters(z.string().max(500))
      .optional()
      .openapi({ description: 'Anything else the payer needs (at most 500 characters, no line breaks)' }),
  })
  .strict()
  .superRefine((details, ctx) => {
    if ((details.method === 'PAYPAL' || details.method === 'WISE') && !details.email) {
      ctx.addIssue({ code: 'custom', path: ['email'], message: `is required for ${details.method} payouts` });
    }
    if (details.method === 'BANK_TRANSFER' && (!details.iban || !details.accountHolder)) {
      ctx.addIssue({ code: 'custom', path: [details.iban ? 'accountHolder' : 'iban'], message: 'is required for BANK_TRANSFER payouts' });
    }
  })
  .openapi('PayoutDetailsBody', { description: "Where the affiliate's payouts go" });

/** As an affiliate shows it: the IBAN is shown by its last four characters only, as card and bank numbers are elsewhere. */
export const PayoutDetails = z
  .object({
    method: PayoutMethod.openapi({ description: 'How the affiliate is paid: PAYPAL, BANK_TRANSFER, WISE or OTHER' }),
    email: z.string().nullable().openapi({ description: 'The PayPal or Wise account email' }),
    accountHolder: z.string().nullable().openapi({ description: 'The name on the bank account' }),
    ibanLast4: z
      .string()
      .nullable()
      .openapi({ description: 'The last 4 characters of the IBAN (the full IBAN is only in the payout CSV exports)' }),
    note: z.string().nullable().openapi({ description: 'Anything else the payer needs' }),
  })
  .openapi('PayoutDetails', { description: 'Where the payouts go, the IBAN shown by its last 4 characters; null: not set' });

/** Internal: payout details in full (the IBAN too), as the affiliate service keeps them and a payout pays to them. */
export const FullPayoutDetails = z.object({
  method: PayoutMethod,
  email: z.string().nullable(),
  accountHolder: z.string().nullable(),
  iban: z.string().nullable(),
  note: z.string().nullable(),
});

/** Payout details as responses and events show them: the IBAN by its last four characters. */
export function shownPayoutDetails(details: z.infer<typeof FullPayoutDetails> | null): PayoutDetails | null {
  if (!details) return null;
  const { iban, ...rest } = details;
  return { ...rest, ibanLast4: iban ? iban.slice(-4) : null };
}

export const CommissionStatus = z.enum(['PENDING', 'DUE', 'HELD', 'PAID', 'VOID']);

export const PayoutStatus = z.enum(['PENDING', 'PAID', 'FAILED']);

export const PayoutItem = z
  .object({
    saleId: Uuid.openapi({ description: 'The sale of the commission' }),
    commissionId: Uuid.openapi({ description: 'The commission paid (or deducted) by the payout' }),
    amount: z.number().openapi({ description: "The commission's amount in the payout's currency; negative for an adjustment" }),
  })
  .openapi('PayoutItem', { description: 'One commission in a payout' });

export const Payout = z
  .object({
    id: Uuid.openapi({ description: "The payout's id" }),
    affiliateId: Uuid.openapi({ description: 'The affiliate paid' }),
    amount: z
      .number()
      .openapi({ description: "What to pay: the sum of its commissions, in currency, as a decimal rounded to the currency's minor unit" }),
    currency: z.string().openapi({ description: 'ISO 4217 code of amount: one payout per affiliate and currency' }),
    status: PayoutStatus.openapi({
      description: 'PENDING until you mark it PAID (its commissions become PAID) or FAILED (they are DUE again)',
    }),
    commissions: z.array(PayoutItem).openapi({ description: 'The commissions it pays' }),
    payee: z
      .object({
        name: z.string().openapi({ description: "The affiliate's name" }),
        email: z.string().openapi({ description: "The affiliate's email" }),
        payoutDetails: PayoutDetails.nullable(),
      })
      .openapi({ description: 'Whom to pay, and where, as of the payout' }),
    externalReference: z.string().nullable().openapi({ description: 'Your reference of the transfer, given when marking it; null: none' }),
    programId: Uuid.openapi({ description: 'The program' }),
    createdAt: DateTime.openapi({ description: 'When the payout was created' }),
    updatedAt: DateTime.openapi({ description: 'When it last changed' }),
    paidAt: DateTime.nullable().openapi({ description: 'When it was marked PAID; null: not paid' }),
  })
  .openapi('Payout', { description: "An affiliate's due commissions in one currency, gathered to be paid at once" });

export const CreatePayoutsBody = z
  .object({
    affiliateId: Uuid.optional().openapi({ description: 'Only this affiliate; absent: every affiliate' }),
    currency: Currency.optional().openapi({ description: 'Only commissions in this currency; absent: every currency' }),
  })
  .strict()
  .openapi('CreatePayoutsBody');

export const UpdatePayoutBody = z
  .object({
    payoutId: Uuid.openapi({ description: 'The payout to mark' }),
    status: z
      .enum(['PAID', 'FAILED'])
      .openapi({ description: 'PAID: its commissions become PAID; FAILED: they are DUE again, for a later payout' }),
    externalReference: ShortText.optional().openapi({ description: 'Your reference of the transfer (a bank or PayPal transaction id)' }),
  })
  .strict()
  .openapi('UpdatePayoutBody');

export const PayoutQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'A payout id: that payout' }),
  affiliateId: z.string().max(100).optional().openapi({ description: 'An affiliate id: its payouts' }),
  status: PayoutStatus.optional().openapi({ description: 'Only payouts of this status' }),
  currency: Currency.optional().openapi({ description: 'Only payouts in this currency' }),
  ...dateRange('createdAt', 'creation'),
  ...dateRange('paidAt', 'payment (paidAt; unpaid payouts never match)'),
}).strict();

export const PayoutExportQuery = z.object({ payoutId: Uuid.openapi({ description: 'The payout to export' }) }).strict();

/** The longest period one report covers: a report reads every sale of its period, so the period is bounded. */
export const MAX_REPORT_PERIOD_DAYS = 366;

/** A period [from, to): `from` is required, `to` defaults to now, and it spans at most MAX_REPORT_PERIOD_DAYS. */
export const ReportQuery = z
  .object({
    from: DateTime.openapi({ description: `Start of the period (required); the period spans at most ${MAX_REPORT_PERIOD_DAYS} days` }),
    to: DateTime.optional().openapi({ description: 'End of the period, excluded (default: now)' }),
  })
  .strict();

export const AffiliateReportRow = z
  .object({
    affiliateId: Uuid.openapi({ description: 'The affiliate' }),
    name: z.string().openapi({ description: "The affiliate's name" }),
    email: z.string().openapi({ description: "The affiliate's email" }),
    currency: z.string().openapi({
      description:
        "The currency of this row's money figures: one row per affiliate and currency of its sales and commissions in the period (an affiliate with none has one row in the program's reportingCurrency)",
    }),
    clicks: z
      .number()
      .int()
      .openapi({ description: "The affiliate's clicks in the period, on all its links (not per currency: the same on each of its rows)" }),
    referrals: z.number().int().openapi({
      description:
        "The affiliate's referrals created in the period, whatever the attribution (not per currency: the same on each of its rows)",
    }),
    sales: z.number().int().openapi({
      description:
        'Live (not reversed) sales in this currency recorded in the period, by promotional code, referral, click, visitor or affiliate id',
    }),
    revenue: z.number().openapi({ description: 'Their totalEarned, in this currency' }),
    commissionEarned: z.number().openapi({
      description:
        'The commissions in this currency of the sales recorded in the period, reversed ones included (a reversed sale keeps a commission already in a payout beside its negative adjustment), all but VOID (adjustments negative): pending + held + due + paid',
    }),
    commissionPending: z.number().openapi({ description: 'Those commissions now PENDING (in their hold)' }),
    commissionHeld: z.number().openapi({ description: 'Earned and HELD for review (part of commissionEarned)' }),
    commissionDue: z
      .number()
      .openapi({ description: 'Those now DUE (past the hold, not yet paid; including those in a payout not yet PAID)' }),
    commissionPaid: z.number().openapi({ description: 'Those now PAID (their payout was marked PAID)' }),
    commissionVoided: z.number().openapi({ description: 'Those now VOID (not counted in commissionEarned)' }),
  })
  .openapi('AffiliateReportRow', {
    description:
      "One affiliate in one currency: sales and revenue count its live sales recorded in the period; each commission figure equals the sum over the commissions (status as GET /sales shows it) of that affiliate's sales recorded in the period, reversed ones included, in that currency, so that pending + due equals what the statement says is owed; no figure adds two currencies",
  });

/**
 * Internal: what the sale service needs of an affiliate's plan at the moment of a sale or a payout,
 * answered by the affiliate service (GET /internal/affiliates): for a payout as stored; for a sale
 * (`recent=true`) as that affiliate process read it within 2 s (its own changes seen at once).
 */
export const PlanInForce = CommissionPlan.pick({
  name: true,
  commissionType: true,
  rate: true,
  currency: true,
  firstPaymentRate: true,
  recurring: true,
  recurringMonths: true,
  holdDays: true,
  minimumPayout: true,
}).extend({
  /** Null when the affiliate earns its own commissionRate (no plan of its own, no default plan). */
  id: Uuid.nullable(),
  /** The rate of the tier the affiliate has reached on this plan, or null for the base rate. */
  tierRate: z.number().nullable(),
});

/** Internal: the affiliate's activity in a period, for the report (from the affiliate service's link activity). */
export const AffiliateActivity = z.object({
  affiliateId: Uuid,
  name: z.string(),
  email: z.string(),
  clicks: z.number().int(),
  referrals: z.number().int(),
  /** The program's reporting currency, for the row of an affiliate with no sales (absent from an older affiliate service: USD). */
  reportingCurrency: z.string().optional(),
});

export type CommissionPlan = z.infer<typeof CommissionPlan>;
export type CreateCommissionPlanBody = z.infer<typeof CreateCommissionPlanBody>;
export type UpdateCommissionPlanBody = z.infer<typeof UpdateCommissionPlanBody>;
export type CommissionTierRule = z.infer<typeof CommissionTierRule>;
export type CommissionTier = z.infer<typeof CommissionTier>;
export type PayoutDetailsBody = z.infer<typeof PayoutDetailsBody>;
export type PayoutDetails = z.infer<typeof PayoutDetails>;
export type FullPayoutDetails = z.infer<typeof FullPayoutDetails>;
export type CommissionStatus = z.infer<typeof CommissionStatus>;
export type Payout = z.infer<typeof Payout>;
export type PayoutStatus = z.infer<typeof PayoutStatus>;
export type PlanInForce = z.infer<typeof PlanInForce>;
export type AffiliateActivity = z.infer<typeof AffiliateActivity>;
export type AffiliateReportRow = z.infer<typeof AffiliateReportRow>;
