import { isActiveCurrency } from '@affiliate/contracts';
import { badRequest, describeZodError } from '@affiliate/platform';
import Stripe from 'stripe';
import { z, type ZodTypeAny } from 'zod';

/**
 * The parts of Stripe's objects the integration reads, as Stripe sends them in webhook events. A
 * field Stripe may send either as an id or expanded into its object is read as the id. An endpoint
 * keeps the API version it was created with, so both generations are read: before 2025-03-31.basil
 * an invoice named its `charge`, `payment_intent`, `subscription` and `discount` (expanded, with its
 * promotion code); since then it names none of them (`discounts` are bare `di_…` ids, `payments` is
 * not in webhook payloads), and the payment comes in its own `invoice_payment.paid` event, the
 * subscription under `parent.subscription_details`, the promotion code only on the checkout session.
 */
const StripeRef = z
  .union([z.string(), z.object({ id: z.string() }).passthrough()])
  .transform((value) => (typeof value === 'string' ? value : value.id));

/**
 * Stripe's currency (lower case, `usd`) as the API's: an active ISO 4217 code, upper case, from the
 * table the rest of the platform counts minor units by. Any other three letters are a 400 naming the
 * field (as any shape the integration cannot read), so nothing is recorded in a currency that
 * does not exist.
 */
const StripeCurrency = z
  .string()
  .transform((code) => code.toUpperCase())
  .refine(isActiveCurrency, (code) => ({ message: `${code} is not an active ISO 4217 currency code, so no sale is recorded for it` }));

export const StripeEvent = z.object({
  id: z.string().min(1).max(255),
  object: z.literal('event'),
  type: z.string(),
  created: z.number().int(),
  data: z.object({ object: z.record(z.unknown()) }),
});
export type StripeEvent = z.infer<typeof StripeEvent>;

const Discount = z.object({ promotion_code: StripeRef.nullish() }).passthrough();

export const CheckoutSession = z.object({
  id: z.string(),
  mode: z.string().nullish(),
  payment_status: z.string().nullish(),
  amount_total: z.number().int().nonnegative().nullish(),
  currency: StripeCurrency.nullish(),
  client_reference_id: z.string().nullish(),
  customer: StripeRef.nullish(),
  customer_email: z.string().nullish(),
  customer_details: z.object({ email: z.string().nullish(), name: z.string().nullish() }).nullish(),
  metadata: z.record(z.string()).nullish(),
  invoice: StripeRef.nullish(),
  payment_intent: StripeRef.nullish(),
  subscription: StripeRef.nullish(),
  /** `{coupon, promotion_code}` per discount applied; the expanded breakdown names the promotion code as well. */
  discounts: z.array(Discount).nullish(),
  total_details: z
    .object({
      breakdown: z
        .object({ discounts: z.array(z.object({ discount: Discount }).passthrough()) })
        .passthrough()
        .nullish(),
    })
    .passthrough()
    .nullish(),
});
export type CheckoutSession = z.infer<typeof CheckoutSession>;

export const Invoice = z.object({
  id: z.string().min(1).max(200),
  customer: StripeRef.nullish(),
  customer_email: z.string().nullish(),
  currency: StripeCurrency,
  amount_paid: z.number().int().nonnegative(),
  billing_reason: z.string().nullish(),
  status_transitions: z.object({ paid_at: z.number().int().nullish() }).nullish(),
  charge: StripeRef.nullish(),
  payment_intent: StripeRef.nullish(),
  payments: z
    .object({
      data: z.array(z.object({ payment: z.object({ charge: StripeRef.nullish(), payment_intent: StripeRef.nullish() }).passthrough() })),
    })
    .nullish(),
  discount: Discount.nullish(),
  discounts: z.array(z.union([z.string(), Discount])).nullish(),
  subscription: StripeRef.nullish(),
  parent: z
    .object({ subscription_details: z.object({ subscription: StripeRef.nullish() }).passthrough().nullish() })
    .passthrough()
    .nullish(),
});
export type Invoice = z.infer<typeof Invoice>;

/** invoice_payment.paid (since 2025-03-31.basil): which payment paid which invoice. */
export const InvoicePayment = z.object({
  id: z.string(),
  invoice: StripeRef,
  payment: z.object({ charge: StripeRef.nullish(), payment_intent: StripeRef.nullish() }).passthrough(),
});

export const Charge = z.object({
  id: z.string(),
  amount: z.number().int().positive(),
  amount_refunded: z.number().int().nonnegative(),
  payment_intent: StripeRef.nullish(),
});

export const Dispute = z.object({ id: z.string(), charge: StripeRef.nullish(), payment_intent: StripeRef.nullish() });

/**
 * The event, once its Stripe-Signature proves it came from Stripe with this program's secret (the
 * official package checks the HMAC of the exact bytes received and the timestamp's tolerance).
 */
export function verifiedStripeEvent(payload: Buffer, signature: string | undefined, webhookSecret: string): StripeEvent {
  if (!signature)
    throw badRequest(
      'Stripe-Signature header missing: only Stripe, signing with the secret stored for this program, can post here',
      'signature_invalid',
    );
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(payload, signature, webhookSecret);
  } catch (error) {
    throw badRequest(
      `Stripe-Signature does not verify with the webhook secret stored for this program: ${(error as Error).message}`,
      'signature_invalid',
    );
  }
  const parsed = StripeEvent.safeParse(event);
  if (!parsed.success) throw badRequest(describeZodError(parsed.error, 'body'));
  return parsed.data;
}

/** The event's `data.object` as the handler of its type reads it; a shape it cannot read is a 400 naming the field. */
export function objectOf<Schema extends ZodTypeAny>(event: StripeEvent, schema: Schema): z.infer<Schema> {
  const parsed = schema.safeParse(event.data.object);
  if (!parsed.success) throw badRequest(`Stripe event ${event.id} (${event.type}): ${describeZodError(parsed.error, 'body')}`);
  return parsed.data;
}

/**
 * Stripe states amounts in the currency's smallest unit by its own list, which is not ISO 4217's
 * for every currency (ISK, HUF and TWD come with two decimals although ISO has none or they are
 * not used): https://docs.stripe.com/currencies#zero-decimal
 */
const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/** A Stripe amount as the decimal the API speaks (2000 USD is 20, 2000 JPY is 2000). */
export function fromStripeAmount(amount: number, currency: string): number {
  const code = currency.toUpperCase();
  const digits = ZERO_DECIMAL.has(code) ? 0 : THREE_DECIMAL.has(code) ? 3 : 2;
  return amount / 10 ** digits;
}
