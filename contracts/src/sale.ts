import { Affiliate, AttributionReason, VisitorId } from './affiliate';
import { CommissionStatus } from './commission';
import { Amount, Currency, dateRange, DateTime, Email, ListFormat, ListQuery, ShortText, Uuid } from './common';
import { Referral } from './referral';
import { CommissionDecision, Risk } from './risk';
import { z } from './zod';

export const Commission = z
  .object({
    id: Uuid,
    affiliateId: Uuid,
    amount: z.number().openapi({ description: 'Negative for an adjustment: a commission paid (or in a payout) whose sale was reversed, deducted from the next payout' }),
    currency: z.string(),
    status: CommissionStatus.openapi({ description: 'PENDING until availableAt (the hold), then DUE; HELD while held for review (a risk signal or a reviewer: never paid until released); PAID once its payout is paid; VOID when the sale was reversed before payment or the commission was voided' }),
    availableAt: DateTime,
    commissionPlanId: Uuid.nullable(),
    adjusts: Uuid.nullable().openapi({ description: 'On an adjustment: the id of the commission it takes back' }),
    payoutCreated: z.boolean(),
    payoutId: z.string().nullable(),
    decisions: z.array(CommissionDecision).optional().openapi({ description: 'Every hold, release and void of this commission, oldest first: when, by which key (or the risk rules, or a reversal) and why; absent until the first' }),
  })
  .openapi('Commission');

export const Sale = z
  .object({
    id: Uuid,
    affiliateId: Uuid,
    referralId: Uuid.nullable(),
    promotionalCodeId: Uuid.nullable(),
    couponId: Uuid.nullable(),
    promoCode: z.string().nullable(),
    linkId: Uuid.nullable(),
    externalId: z.string().nullable(),
    customerId: z.string().nullable(),
    totalEarned: z.number(),
    currency: z.string(),
    commissionRate: z.number().nullable().openapi({ description: 'The percentage applied; null for a flat commission or none' }),
    commissionEarned: z.number(),
    commissionPlanId: Uuid.nullable().openapi({ description: "The plan in force at the sale; null when the affiliate earned its own commissionRate" }),
    paymentTrigger: z.string(),
    paidAt: DateTime.openapi({ description: 'When the payment was made (the hold and the recurring rules count from it)' }),
    commissions: z.array(Commission),
    // A union, not .nullable(): the generator would publish a bare $ref without null.
    attribution: z.union([AttributionReason, z.null()]).openapi({ description: 'How the sale was attributed to its affiliate; null on sales made before this was recorded' }),
    risk: Risk.openapi({ description: "The risk signals found when the sale was recorded (its referral's included) and the strongest action of the program's riskActions among them: HOLD made its commission HELD, VOID made it VOID" }),
    programId: Uuid,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Sale');

/** sale.created carries the affiliate and the referral expanded (spec, payload rule 2). */
export const ExpandedSale = Sale.extend({
  affiliate: Affiliate.partial().extend({ id: Uuid }),
  referral: z.union([Referral, z.null()]),
}).openapi('ExpandedSale');

export const PaymentTrigger = z.enum(['one_time', 'subscription_created', 'subscription_renewed', 'invoice_paid', 'manual', 'api']);

export const CreateSaleBody = z
  .object({
    promoCode: z.string().trim().min(1).max(100).optional(),
    referralId: Uuid.optional(),
    email: Email.optional(),
    clickId: z
      .number()
      .int()
      .nonnegative()
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .openapi({ description: "A click id (the tracking script's window.affiliate.clickId): the sale goes to the click's affiliate, within the program's attribution window" }),
    visitorId: VisitorId.optional().openapi({
      description: "A visitor id (window.affiliate.visitorId): the sale goes to the click the program's attributionModel picks among the visitor's clicks within the attribution window",
    }),
    totalEarned: Amount,
    currency: Currency.default('USD'),
    externalId: ShortText.optional().openapi({
      description:
        'The payment in your system (a payment intent, an order): recorded once. A repeat with the same amount, currency and attribution answers the sale already recorded with `Idempotent-Replayed: true`; with other content it is a 409 naming that sale',
    }),
    paymentTrigger: PaymentTrigger.default('api'),
    paidAt: DateTime.optional().openapi({ description: 'When the payment was made, for payments reported late or imported; default now, never in the future' }),
    customerId: ShortText.optional(),
    firstTimeOrder: z.boolean().optional(),
    productIds: z.array(ShortText).max(500).optional(),
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
      ctx.addIssue({ code: 'custom', path: ['promoCode'], message: 'clickId and visitorId must not be sent with promoCode: the affiliate comes from the code' });
    }
    if (byVisit && (body.referralId !== undefined || body.email !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['clickId'], message: 'clickId and visitorId attribute the sale by themselves: send them without referralId or email' });
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
    saleId: Uuid,
    totalEarned: Amount.optional(),
    commissionRate: z.number().finite().min(0).max(100).optional(),
    payoutId: ShortText.nullable().optional(),
    payoutCreated: z.boolean().optional(),
  })
  .strict()
  .openapi('UpdateSaleBody');

export const DeleteSaleBody = z.object({ saleId: Uuid }).strict().openapi('DeleteSaleBody');

export const SaleQuery = ListQuery.extend({
  id: z.string().max(100).optional(),
  affiliateId: z.string().max(100).optional(),
  referralId: z.string().max(100).optional(),
  currency: Currency.optional(),
  ...dateRange('createdAt', 'recording'),
  ...dateRange('paidAt', 'payment (paidAt)'),
  format: ListFormat,
}).strict();

export type Sale = z.infer<typeof Sale>;
export type Commission = z.infer<typeof Commission>;
export type ExpandedSale = z.infer<typeof ExpandedSale>;
export type CreateSaleBody = z.infer<typeof CreateSaleBody>;
export type UpdateSaleBody = z.infer<typeof UpdateSaleBody>;
