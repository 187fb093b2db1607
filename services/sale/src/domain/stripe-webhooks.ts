import type { CreateSaleBody, Referral, StripeWebhookReceipt } from '@affiliate/contracts';
import { AppError, badRequest, conflict, fromMinorUnits, percentOfMinorUnits, toMinorUnits } from '@affiliate/platform';
import { findPromotionalCodeByExternalId } from '../data-access/promotional-code-directory';
import { createReferral, findReferralByEmail } from '../data-access/referral-directory';
import type { StripePaymentLink } from '../data-access/stripe-integration';
import { recordSale } from './record-sale';
import { reverseSale } from './reverse-sale';
import type { SaleDependencies } from './sale-dependencies';
import { Charge, CheckoutSession, Dispute, fromStripeAmount, Invoice, objectOf, verifiedStripeEvent, type StripeEvent } from './stripe-events';
import { updateSale } from './update-sale';

type Outcome = { outcome: 'processed' | 'ignored'; detail: string };
type Handler = (deps: SaleDependencies, programId: string, event: StripeEvent) => Promise<Outcome>;

const processed = (detail: string): Outcome => ({ outcome: 'processed', detail });
const ignored = (detail: string): Outcome => ({ outcome: 'ignored', detail });

/** The events the integration acts on; Stripe sends others when the endpoint subscribes to more, and they are ignored. */
const HANDLERS: Record<string, Handler> = {
  'checkout.session.completed': linkCheckoutCustomer,
  'invoice.paid': recordInvoiceSale,
  'charge.refunded': refundSale,
  'charge.dispute.created': disputeSale,
};

/**
 * A Stripe webhook for a program: verified with the program's own secret, then handled once per
 * event id. The claim is marked done only after the handler succeeded; a failure gives it back, so
 * Stripe's retry of the same event is handled then (every step is idempotent, so what the failed
 * attempt did is not done twice). A copy arriving while the first is being handled gets a 409, and
 * Stripe sends it again later.
 */
export async function receiveStripeEvent(deps: SaleDependencies, programId: string, payload: Buffer, signature: string | undefined): Promise<StripeWebhookReceipt> {
  const webhookSecret = await deps.repositories.stripeSettings.webhookSecretOf(programId);
  if (webhookSecret === null) throw badRequest('Stripe is not connected to this program: store the webhook signing secret with PUT /api/v1/integrations/stripe first');
  const event = verifiedStripeEvent(payload, signature, webhookSecret);
  const handle = Object.hasOwn(HANDLERS, event.type) ? HANDLERS[event.type] : undefined;
  if (!handle) return { received: true, outcome: 'ignored', detail: `${event.type} events are not used` };

  const claim = await deps.repositories.stripeEvents.claim(programId, event.id);
  if (claim === 'done') return { received: true, outcome: 'replayed', detail: `event ${event.id} was handled before` };
  if (claim === 'busy') throw conflict(`Stripe event ${event.id} is being handled right now; it is handled once`);
  let result: Outcome;
  try {
    result = await handle(deps, programId, event);
  } catch (error) {
    await deps.repositories.stripeEvents.release(programId, event.id).catch((releaseError: unknown) => {
      deps.logger.error({ err: releaseError, programId, eventId: event.id }, 'a failed Stripe event could not be released; its retry waits for the claim to expire');
    });
    throw error;
  }
  await deps.repositories.stripeEvents.complete(programId, event.id);
  deps.logger.info({ programId, eventId: event.id, type: event.type, ...result }, 'Stripe event handled');
  return { received: true, ...result };
}

/**
 * checkout.session.completed: the Stripe customer becomes the referral of the visitor who paid.
 * The referral is the one of the customer's email if the program has it; else one is created from
 * the click (client_reference_id or metadata.affiliate_click_id, all digits) or the visitor id.
 */
async function linkCheckoutCustomer(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const session = objectOf(event, CheckoutSession);
  if (!session.customer) return ignored(`checkout session ${session.id} has no Stripe customer to link`);
  const linked = await deps.repositories.stripeLinks.referralOfCustomer(programId, session.customer);
  if (linked) return ignored(`customer ${session.customer} is already linked to referral ${linked}`);
  const email = session.customer_details?.email ?? session.customer_email ?? null;
  const reference = session.client_reference_id ?? session.metadata?.affiliate_click_id ?? session.metadata?.affiliate_visitor_id ?? null;
  const referral = await referralOfCheckout(deps, programId, { email, name: session.customer_details?.name ?? null, reference });
  if ('refused' in referral) return ignored(`checkout session ${session.id}: ${referral.refused}`);
  await deps.repositories.stripeLinks.linkCustomer(programId, session.customer, referral.id);
  return processed(`customer ${session.customer} linked to referral ${referral.id}`);
}

const CLICK_ID = /^\d{1,15}$/;

async function referralOfCheckout(
  deps: SaleDependencies,
  programId: string,
  customer: { email: string | null; name: string | null; reference: string | null },
): Promise<Referral | { refused: string }> {
  const { email, name, reference } = customer;
  const existing = email === null ? null : await findReferralByEmail(deps.referrals, programId, email);
  if (existing) return existing;
  if (reference === null) return { refused: 'no click or visitor id, and no referral with the customer email' };
  if (email === null) return { refused: 'the customer has no email to create the referral with' };
  const created = await createReferral(deps.referrals, programId, {
    email,
    ...(name ? { name: name.slice(0, 200) } : {}),
    status: 'active',
    ...(CLICK_ID.test(reference) ? { clickId: Number(reference) } : { visitorId: reference }),
  });
  if ('referral' in created) return created.referral;
  // Created meanwhile by a concurrent request for the same email: that referral is the customer's.
  return (await findReferralByEmail(deps.referrals, programId, email)) ?? created;
}

/** Stripe's billing_reason as the sale's paymentTrigger: a subscription's first invoice, its renewals, or a one-off. */
function paymentTriggerOf(billingReason: string | null | undefined): CreateSaleBody['paymentTrigger'] {
  if (billingReason === 'subscription_create') return 'invoice_paid';
  if (billingReason === 'subscription_cycle' || billingReason === 'subscription_update' || billingReason === 'subscription_threshold') return 'subscription_renewed';
  return 'one_time';
}

/**
 * invoice.paid: a sale with the invoice id as its externalId (a replay of the invoice finds the
 * sale recorded). Attributed to the customer's referral (the checkout's link, else the invoice
 * email), else to a promotion code on the invoice that is a code of the program (its externalId).
 */
async function recordInvoiceSale(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const invoice = objectOf(event, Invoice);
  if (invoice.amount_paid === 0) return ignored(`invoice ${invoice.id} paid nothing`);
  const attribution = await invoiceAttribution(deps, programId, invoice);
  if (!attribution) return ignored(`invoice ${invoice.id}: its customer is no referral of the program, and it has no promotional code of the program`);
  const currency = invoice.currency.toUpperCase();
  const paidAtSeconds = invoice.status_transitions?.paid_at ?? event.created;
  const body: CreateSaleBody = {
    ...attribution,
    totalEarned: fromStripeAmount(invoice.amount_paid, currency),
    currency,
    externalId: invoice.id,
    paymentTrigger: paymentTriggerOf(invoice.billing_reason),
    paidAt: new Date(paidAtSeconds * 1000).toISOString(),
    ...(invoice.customer ? { customerId: invoice.customer } : {}),
  };
  const sale = await refusalAsIgnored(() => recordSale(deps, programId, body));
  if ('outcome' in sale) return sale;
  const link: StripePaymentLink = { saleId: sale.id, saleTotalMinor: toMinorUnits(sale.totalEarned, sale.currency), currency: sale.currency };
  for (const paymentId of paymentIdsOf(invoice)) await deps.repositories.stripeLinks.linkPayment(programId, paymentId, link);
  return processed(`sale ${sale.id} recorded for invoice ${invoice.id}`);
}

async function invoiceAttribution(deps: SaleDependencies, programId: string, invoice: Invoice): Promise<{ referralId: string } | { promoCode: string } | null> {
  const linked = invoice.customer ? await deps.repositories.stripeLinks.referralOfCustomer(programId, invoice.customer) : null;
  if (linked) return { referralId: linked };
  const byEmail = invoice.customer_email ? await findReferralByEmail(deps.referrals, programId, invoice.customer_email) : null;
  if (byEmail) return { referralId: byEmail.id };
  for (const promotionCodeId of promotionCodeIdsOf(invoice)) {
    const code = await findPromotionalCodeByExternalId(deps.coupons, programId, promotionCodeId);
    if (code) return { promoCode: code.code };
  }
  return null;
}

/** The Stripe promotion codes applied to the invoice (a discount given as a bare id names none). */
function promotionCodeIdsOf(invoice: Invoice): string[] {
  const discounts = [invoice.discount, ...(invoice.discounts ?? [])];
  const ids = discounts.flatMap((discount) => (discount && typeof discount !== 'string' && discount.promotion_code ? [discount.promotion_code] : []));
  return [...new Set(ids)];
}

/** The charge and payment intent that paid the invoice, whichever the API version names: refunds and disputes name them. */
function paymentIdsOf(invoice: Invoice): string[] {
  const payments = (invoice.payments?.data ?? []).flatMap(({ payment }) => [payment.charge, payment.payment_intent]);
  return [...new Set([invoice.charge, invoice.payment_intent, ...payments].filter((id): id is string => typeof id === 'string'))];
}

async function saleOfPayment(deps: SaleDependencies, programId: string, paymentIds: (string | null | undefined)[]): Promise<StripePaymentLink | null> {
  for (const paymentId of paymentIds) {
    if (!paymentId) continue;
    const link = await deps.repositories.stripeLinks.saleOfPayment(programId, paymentId);
    if (link) return link;
  }
  return null;
}

/**
 * charge.refunded: refunded in full, the sale is reversed (sale.deleted); in part, its amount is the
 * part not refunded and the commission follows (sale.updated). Stripe's amount_refunded is the total
 * refunded so far, and the amount is scaled from the sale as recorded, so a second partial refund
 * takes back the cumulative share, not a share of a share.
 */
async function refundSale(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const charge = objectOf(event, Charge);
  const link = await saleOfPayment(deps, programId, [charge.id, charge.payment_intent]);
  if (!link) return ignored(`charge ${charge.id} paid no sale of this program`);
  if (charge.amount_refunded === 0) return ignored(`charge ${charge.id} has nothing refunded`);
  if (charge.amount_refunded >= charge.amount) return reverse(deps, programId, link.saleId, `charge ${charge.id} refunded in full`);
  const keptPercent = ((charge.amount - charge.amount_refunded) / charge.amount) * 100;
  const totalEarned = fromMinorUnits(percentOfMinorUnits(link.saleTotalMinor, keptPercent), link.currency);
  const updated = await refusalAsIgnored(() => updateSale(deps.repositories, programId, { saleId: link.saleId, totalEarned }));
  if ('outcome' in updated) return updated;
  return processed(`sale ${link.saleId} is now ${totalEarned} ${link.currency} after a partial refund of charge ${charge.id}`);
}

/** charge.dispute.created: the payment is contested, so the sale is reversed at once, as for a refund. */
async function disputeSale(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const dispute = objectOf(event, Dispute);
  const link = await saleOfPayment(deps, programId, [dispute.charge, dispute.payment_intent]);
  if (!link) return ignored(`dispute ${dispute.id} is about no sale of this program`);
  return reverse(deps, programId, link.saleId, `dispute ${dispute.id}`);
}

async function reverse(deps: SaleDependencies, programId: string, saleId: string, why: string): Promise<Outcome> {
  const reversed = await refusalAsIgnored(() => reverseSale(deps.repositories, programId, saleId));
  return 'outcome' in reversed ? reversed : processed(`sale ${saleId} reversed: ${why}`);
}

/**
 * A use case's refusal (the sale is reversed already, the affiliate is no longer active, the code's
 * limit is reached) is final for this event: it is answered 200 and noted, since Stripe would only
 * send it again for days. A failure that a retry can cure (409, 5xx) goes back to Stripe.
 */
async function refusalAsIgnored<T>(act: () => Promise<T>): Promise<T | Outcome> {
  try {
    return await act();
  } catch (error) {
    if (error instanceof AppError && (error.status === 400 || error.status === 404)) return ignored(error.message);
    throw error;
  }
}
