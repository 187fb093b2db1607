import { Affiliate, AttributionReason, VisitorId } from './affiliate';
import { CommissionStatus } from './commission';
import { Amount, Currency, dateRange, DateTime, Email, ListFormat, ListQuery, ShortText, Uuid } from './common';
import { Referral } from './referral';
import { CommissionDecision, Risk } from './risk';
import { z } from './zod';

/** Money the API shows: decimals in the currency, exactly its minor units (2 decimals for USD, 0 for JPY, 3 for KWD). */
const money = (what: string) => `${what}, in currency, as a decimal rounded to the currency's minor unit (2 decimals for USD, 0 for JPY)`;

export const Commission = z
  .object({
    id: Uuid.openapi({ description: "The commission's id" }),
    affiliateId: Uuid.openapi({ description: 'The affiliate who earns it' }),
    amount: z.number().openapi({
      description: 'Negative for an adjustment: a commission paid (or in a payout) whose sale was reversed, deducted from the next payout',
    }),
    currency: z.string().openapi({ description: "ISO 4217 code of amount: the sale's currency, or a FLAT plan's" }),
    status: CommissionStatus.openapi({
      description:
        'PENDING until availableAt (the hold), then DUE; HELD while held for review (a risk signal or a reviewer: never paid until released); PAID once its payout is paid; VOID when the sale was reversed before payment or the commission was voided',
    }),
    availableAt: DateTime.openapi({
      description: "When the hold ends and a PENDING commission becomes DUE (paidAt plus the plan's holdDays)",
    }),
    commissionPlanId: Uuid.nullable().openapi({ description: "The plan it was computed by; null: the affiliate's own commissionRate" }),
    adjusts: Uuid.nullable().openapi({ description: 'On an adjustment: the id of the commission it takes back' }),
    payoutCreated: z.boolean().openapi({ description: 'Whether the commission is in a payout (or was marked paid by PUT /sales)' }),
    payoutId: z
      .string()
      .nullable()
      .openapi({ description: "The payout it is in: a payout run's id, or the payoutId PUT /sales gave; null: none yet" }),
    decisions: z.array(CommissionDecision).optional().openapi({
      description:
        'Every hold, release and void of this commission, oldest first: when, by which key (or the risk rules, or a reversal) and why; absent until the first',
    }),
  })
  .openapi('Commission', { description: 'What an affiliate earns from a sale (or an adjustment taking it back after a reversal)' });

export const Sale = z
  .object({
    id: Uuid.openapi({ description: "The sale's id" }),
    affiliateId: Uuid.openapi({ description: 'The affiliate the payment is attributed to' }),
    referralId: Uuid.nullable().openapi({ description: 'The referral it was attributed through; null: none' }),
    promotionalCodeId: Uuid.nullable().openapi({ description: 'The promotional code used; null: none' }),
    couponId: Uuid.nullable().openapi({ description: "That code's coupon; null: none" }),
    promoCode: z.string().nullable().openapi({ description: 'The code string used; null: none' }),
    linkId: Uuid.nullable().openapi({ description: 'The link it was attributed through; null: none' }),
    externalId: z.string().nullable().openapi({ description: 'Your id of the payment: a payment is recorded once per externalId' }),
    customerId: z.string().nullable().openapi({ description: "The customer's id in your system" }),
    totalEarned: z.number().openapi({ description: money('The payment') }),
    currency: z.string().openapi({ description: 'ISO 4217 code of the payment' }),
    commissionRate: z.number().nullable().openapi({ description: 'The percentage applied; null for a flat commission or none' }),
    commissionEarned: z.number().openapi({ description: money('The commission the sale earned') }),
    commissionPlanId: Uuid.nullable().openapi({
      description: 'The plan in force at the sale; null when the affiliate earned its own commissionRate',
    }),
    paymentTrigger: z
      .string()
      .openapi({ description: 'The kind of payment: one_time, subscription_created, subscription_renewed, invoice_paid, manual or api' }),
    paidAt: DateTime.openapi({ description: 'When the payment was made (the hold and the recurring rules count from it)' }),
    commissions: z
      .array(Commission)
      .openapi({ description: 'The commissions of the sale: normally one, plus an adjustment after a reversal of a paid one' }),
    // A union, not .nullable(): the generator would publish a bare $ref without null.
    attribution: z
      .union([AttributionReason, z.null()])
      .openapi({ description: 'How the sale was attributed to its affiliate; null on sales made before this was recorded' }),
    risk: Risk.openapi({
      description:
        "The risk signals found when the sale was recorded (its referral's included) and the strongest action of the program's riskActions among them: HOLD made its commission HELD, VOID made it VOID",
    }),
    programId: Uuid.openapi({ description: 'The program' }),
    createdAt: DateTime.openapi({ description: 'When the sale was recorded' }),
    updatedAt: DateTime.openapi({ description: 'When it last changed' }),
  })
  .openapi('Sale', { description: 'One payment attributed to an affiliate, with the commission it earned' });

/** sale.created carries the affiliate and the referral expanded (spec, payload rule 2). */
export const ExpandedSale = Sale.extend({
  affiliate: Affiliate.partial()
    .extend({ id: Uuid.openapi({ description: "The affiliate's id" }) })
    .openapi({ description: 'The affiliate, expanded' }),
  referral: z.union([Referral, z.null()]).openapi({ description: 'The referral, expanded; null when the sale has none' }),
}).openapi('ExpandedSale', { description: 'A sale with its affiliate and referral expanded, as sale.created carries it' });

export const PaymentTrigger = z.enum(['one_time', 'subscription_created', 'subscription_renewed', 'invoice_paid', 'manual', 'api']);

export const CreateSaleBody = z
  .object({
    promoCode: z.string().trim().min(1).max(100).optional().openapi({
      description:
        'The code the customer used: the sale goes to its affiliate and the code is redeemed. Send without referralId, email, clickId and visitorId',
    }),
    referralId: Uuid.optional().openapi({ description: 'The referral the customer is: the sale goes to its affiliate' }),
    email: Email.optional().openapi({ description: "The customer's email: the sale goes to the affiliate of that customer's referral" }),
    clickId: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional().openapi({
      description:
        "A click id (the tracking script's window.affiliate.clickId): the sale goes to the click's affiliate, within the program's attribution window",
    }),
    visitorId: VisitorId.optional().openapi({
      description:
        "A visitor id (window.affiliate.visitorId): the sale goes to the click the program's attributionModel picks among the visitor's clicks within the attribution window",
    }),
    totalEarned: Amount.openapi({ description: "The payment, in currency, as a decimal (49.99); rounded to the currency's minor unit" }),
    currency: Currency.default('USD').openapi({ description: 'ISO 4217 code of the payment (default USD); lower case is accepted' }),
    externalId: ShortText.optional().openapi({
      description:
        'The payment in your system (a payment intent, an order): recorded once. A repeat with the same amount, currency and attribution answers the sale already recorded with `Idempotent-Replayed: true`; with other content it is a 409 naming that sale',
    }),
    paymentTrigger: PaymentTrigger.default('api').openapi({
      description:
        "The kind of payment (default api): subscription_renewed and invoice_paid count as recurring for the plan's recurring rule",
    }),
    paidAt: DateTime.optional().openapi({
      description: 'When the payment was made, for payments reported late or imported; default now, never in the future',
    }),
    customerId: ShortText.optional().openapi({
      description:
        "The customer's id in your system: checked against a code's customerId, and by the CUSTOMER_OF_ANOTHER_AFFILIATE risk signal",
    }),
    firstTimeOrder: z
      .boolean()
      .optional()
      .openapi({ description: "Whether this is the customer's first order: a code limited to first orders refuses a sale without it" }),
    productIds: z
      .array(ShortText)
      .max(500)
      .optional()
      .openapi({ description: 'The products bought: a coupon limited to products needs one of them' }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.promoCode !== undefined && (body.referralId !== undefined || body.email !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['promoCode'],
        message: 'referralId and email must not be sent with promoCode: the affiliate comes from the code',
      });
    }
    const byVisit = body.clickId !== undefined || body.visitorId !== undefined;
    if (body.promoCode !== undefined && byVisit) {
      ctx.addIssue({
        code: 'custom',
        path: ['promoCode'],
        message: 'clickId and visitorId must not be sent with promoCode: the affiliate comes from the code',
      });
    }
    if (byVisit && (body.referralId !== undefined || body.email !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['clickId'],
        message: 'clickId and visitorId attribute the sale by themselves: send them without referralId or email',
      });
    }
    if (body.clickId !== undefined && body.visitorId !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['visitorId'], message: 'send clickId or visitorId, not both' });
    }
    if (body.promoCode === undefined && body.referralId === undefined && body.email === undefined && !byVisit) {
      ctx.addIssue({ code: 'custom', path: ['promoCode'], message: 'one of promoCode, referralId or email is required' });
    }
  })
  .openapi('CreateSaleBody');

export const UpdateSaleBody = z
  .object({
    saleId: Uuid.openapi({ description: 'The sale to change' }),
    totalEarned: Amount.optional().openapi({ description: "The corrected payment, in the sale's currency: the commission is recomputed" }),
    commissionRate: z
      .number()
      .finite()
      .min(0)
      .max(100)
      .optional()
      .openapi({ description: 'A percentage (0 to 100) to recompute the commission with' }),
    payoutId: ShortText.nullable()
      .optional()
      .openapi({ description: 'Marks the commissions paid by this payout of yours (made outside the payout runs); null clears it' }),
    payoutCreated: z.boolean().optional().openapi({ description: 'Whether the commissions are in a payout (with payoutId)' }),
  })
  .strict()
  .openapi('UpdateSaleBody');

export const DeleteSaleBody = z
  .object({ saleId: Uuid.openapi({ description: 'The sale to reverse' }) })
  .strict()
  .openapi('DeleteSaleBody');

export const SaleQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'A sale id: that sale' }),
  affiliateId: z.string().max(100).optional().openapi({ description: 'An affiliate id: its sales' }),
  referralId: z.string().max(100).optional().openapi({ description: 'A referral id: its sales' }),
  currency: Currency.optional().openapi({ description: 'Only sales in this currency' }),
  ...dateRange('createdAt', 'recording'),
  ...dateRange('paidAt', 'payment (paidAt)'),
  format: ListFormat,
}).strict();

export type Sale = z.infer<typeof Sale>;
export type Commission = z.infer<typeof Commission>;
export type ExpandedSale = z.infer<typeof ExpandedSale>;
export type CreateSaleBody = z.infer<typeof CreateSaleBody>;
export type UpdateSaleBody = z.infer<typeof UpdateSaleBody>;
