import type { CreateSaleBody, ExplainedAttribution, Sale, StripeWebhookReceipt } from '@affiliate/contracts';
import { AppError, badRequest, conflict, fromMinorUnits, percentOfMinorUnits, toMinorUnits } from '@affiliate/platform';
import { resolveVisit } from '../data-access/attribution-directory';
import { findPromotionalCodeByExternalId } from '../data-access/promotional-code-directory';
import { createReferral, findReferralByEmail } from '../data-access/referral-directory';
import { toSale } from '../data-access/sales';
import type { StripeCustomerCredit, StripePaymentLink, UnattributedInvoice } from '../data-access/stripe-integration';
import type { PinnedCredit } from './attribute-sale';
import { recordSale } from './record-sale';
import { reverseSale } from './reverse-sale';
import type { SaleDependencies } from './sale-dependencies';
import {
  Charge,
  CheckoutSession,
  Dispute,
  fromStripeAmount,
  Invoice,
  InvoicePayment,
  objectOf,
  verifiedStripeEvent,
  type StripeEvent,
} from './stripe-events';
import { updateSale } from './update-sale';

type Outcome = { outcome: 'processed' | 'ignored'; detail: string };
type Handler = (deps: SaleDependencies, programId: string, event: StripeEvent) => Promise<Outcome>;

const processed = (detail: string): Outcome => ({ outcome: 'processed', detail });
const ignored = (detail: string): Outcome => ({ outcome: 'ignored', detail });

/** The events the integration acts on; Stripe sends others when the endpoint subscribes to more, and they are ignored. */
const HANDLERS: Record<string, Handler> = {
  'checkout.session.completed': completeCheckout,
  'invoice.paid': recordInvoiceSale,
  'invoice_payment.paid': linkInvoicePayment,
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
export async function receiveStripeEvent(
  deps: SaleDependencies,
  programId: string,
  payload: Buffer,
  signature: string | undefined,
): Promise<StripeWebhookReceipt> {
  const webhookSecret = await deps.repositories.stripeSettings.webhookSecretOf(programId);
  if (webhookSecret === null)
    throw badRequest(
      'Stripe is not connected to this program: store the webhook signing secret with PUT /api/v1/integrations/stripe first',
      'integration_not_configured',
    );
  const event = verifiedStripeEvent(payload, signature, webhookSecret);
  const handle = Object.hasOwn(HANDLERS, event.type) ? HANDLERS[event.type] : undefined;
  if (!handle) return { received: true, outcome: 'ignored', detail: `${event.type} events are not used` };

  const claim = await deps.repositories.stripeEvents.claim(programId, event.id);
  if (claim === 'done') return { received: true, outcome: 'replayed', detail: `event ${event.id} was handled before` };
  if (claim === 'busy')
    throw conflict(`Stripe event ${event.id} is being handled right now; it is handled once`, 'concurrent_modification');
  let result: Outcome;
  try {
    result = await handle(deps, programId, event);
  } catch (error) {
    await deps.repositories.stripeEvents.release(programId, event.id).catch((releaseError: unknown) => {
      deps.logger.error(
        { err: releaseError, programId, eventId: event.id },
        'a failed Stripe event could not be released; its retry waits for the claim to expire',
      );
    });
    throw error;
  }
  await deps.repositories.stripeEvents.complete(programId, event.id);
  deps.logger.info({ programId, eventId: event.id, type: event.type, ...result }, 'Stripe event handled');
  return { received: true, ...result };
}

/**
 * checkout.session.completed: the customer who paid is credited to the affiliate the checkout names
 * (the customer when there is one, else the guest payment itself), a promotion code used at checkout
 * is remembered for the customer's invoices, and what waited for this link is recorded: a one-off
 * payment's sale, and invoices the customer paid before Stripe sent this event.
 */
async function completeCheckout(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const session = objectOf(event, CheckoutSession);
  // A guest payment is linked by its session: its payment intent's key holds the link to its sale.
  const holder = session.customer ?? session.id;
  const links = deps.repositories.stripeLinks;
  const notes: string[] = [];
  let credit = await links.creditOfCustomer(programId, holder);
  if (credit) notes.push(`${holder} was linked before`);
  else {
    const found = await creditOfCheckout(deps, programId, session);
    if ('refused' in found) notes.push(found.refused);
    else {
      await links.linkCustomer(programId, holder, found);
      credit = found;
      notes.push(`${holder} linked to ${'visit' in found ? `click ${found.visit.clickId}` : `referral ${found.referralId}`}`);
    }
  }
  const promotionCodeId = promotionCodeIdsOfCheckout(session)[0];
  if (promotionCodeId !== undefined) {
    for (const owner of [session.customer, session.subscription])
      if (owner) await links.rememberPromotionCode(programId, owner, promotionCodeId);
  }

  let recorded = 0;
  if (isOneOffPayment(session)) {
    const outcome = await recordCheckoutSale(deps, programId, event, session, credit, promotionCodeId);
    notes.push(outcome.detail);
    if (outcome.outcome === 'processed') recorded += 1;
  }
  const attributes = credit !== null || promotionCodeId !== undefined;
  for (const holderId of attributes ? [session.customer, session.invoice] : []) {
    if (!holderId) continue;
    for (const invoice of await links.unattributedInvoices(programId, holderId)) {
      const outcome = await settleInvoice(deps, programId, invoice, { keepUnattributed: false });
      if (outcome.outcome === 'processed') {
        recorded += 1;
        notes.push(outcome.detail);
        await links.forgetUnattributedInvoice(programId, holderId, invoice.invoiceId);
      }
    }
  }
  const detail = `checkout session ${session.id}: ${notes.join('; ')}`;
  return attributes || recorded > 0 ? processed(detail) : ignored(detail);
}

const CLICK_ID = /^\d{1,15}$/;
const VISITOR_ID = /^[A-Za-z0-9_-]{8,100}$/;

/**
 * Whom the checkout names, most explicit first: the metadata a checkout sets on purpose
 * (`affiliate_click_id`, `affiliate_visitor_id`), then client_reference_id, which a shop may use for
 * its own ids and so counts only when it is a click of this program or a visitor with clicks, then a
 * referral with the customer's email. What does not resolve is passed over, never refused to Stripe.
 */
async function creditOfCheckout(
  deps: SaleDependencies,
  programId: string,
  session: CheckoutSession,
): Promise<StripeCustomerCredit | { refused: string }> {
  const email = session.customer_details?.email ?? session.customer_email ?? null;
  const reference = session.client_reference_id ?? null;
  const candidates: ({ clickId: number } | { visitorId: string })[] = [];
  const clickId = session.metadata?.affiliate_click_id;
  const visitorId = session.metadata?.affiliate_visitor_id;
  if (clickId && CLICK_ID.test(clickId)) candidates.push({ clickId: Number(clickId) });
  if (visitorId && VISITOR_ID.test(visitorId)) candidates.push({ visitorId });
  if (reference && CLICK_ID.test(reference)) candidates.push({ clickId: Number(reference) });
  if (reference && VISITOR_ID.test(reference)) candidates.push({ visitorId: reference });
  const passedOver: string[] = [];
  for (const candidate of candidates) {
    const visit = await resolveVisit(deps.affiliates, programId, candidate);
    if ('refused' in visit) {
      passedOver.push(visit.refused);
      continue;
    }
    return creditOfVisit(deps, programId, visit, candidate, { email, name: session.customer_details?.name ?? null });
  }
  const byEmail = email === null ? null : await findReferralByEmail(deps.referrals, programId, email);
  if (byEmail) return { referralId: byEmail.id, method: 'EMAIL' };
  return { refused: ['no click or visitor of the program named, and no referral with the customer email', ...passedOver].join('; ') };
}

/**
 * The click the checkout named becomes the customer's referral. When the email is the referral of
 * the same affiliate already, that one is used; of another affiliate, the click the checkout named
 * wins, and the customer is credited through it directly (one referral per email).
 */
async function creditOfVisit(
  deps: SaleDependencies,
  programId: string,
  visit: ExplainedAttribution,
  named: { clickId: number } | { visitorId: string },
  customer: { email: string | null; name: string | null },
): Promise<StripeCustomerCredit> {
  if (customer.email === null) return { visit };
  const created = await createReferral(deps.referrals, programId, {
    email: customer.email,
    ...(customer.name ? { name: customer.name.slice(0, 200) } : {}),
    status: 'active',
    ...named,
  });
  if ('referral' in created) return { referralId: created.referral.id, method: 'REFERRAL' };
  const existing = await findReferralByEmail(deps.referrals, programId, customer.email);
  if (existing && existing.affiliateId === visit.affiliateId) return { referralId: existing.id, method: 'REFERRAL' };
  return { visit };
}

/** The promotion codes of a checkout, as its discounts name them or, when expanded, its total's breakdown. */
function promotionCodeIdsOfCheckout(session: CheckoutSession): string[] {
  const discounts = [...(session.discounts ?? []), ...(session.total_details?.breakdown?.discounts ?? []).map(({ discount }) => discount)];
  return [...new Set(discounts.flatMap((discount) => (discount.promotion_code ? [discount.promotion_code] : [])))];
}

/** A Checkout payment that makes no invoice: its session is the only record of the sale. */
const isOneOffPayment = (session: CheckoutSession) => session.mode === 'payment' && !session.invoice;

/**
 * A one-off payment, once paid: a sale of the session's total, its externalId the payment intent
 * (what refunds and disputes name), else the session.
 */
async function recordCheckoutSale(
  deps: SaleDependencies,
  programId: string,
  event: StripeEvent,
  session: CheckoutSession,
  credit: StripeCustomerCredit | null,
  promotionCodeId: string | undefined,
): Promise<Outcome> {
  if (session.payment_status !== 'paid') return ignored(`payment ${session.payment_status ?? 'unknown'}, no sale yet`);
  if (!session.amount_total || !session.currency) return ignored('it paid nothing');
  const code =
    !credit && promotionCodeId !== undefined ? await findPromotionalCodeByExternalId(deps.coupons, programId, promotionCodeId) : null;
  if (!credit && !code) return ignored('no affiliate to credit the payment to');
  const currency = session.currency.toUpperCase();
  const body: CreateSaleBody = {
    ...(code ? { promoCode: code.code } : {}),
    totalEarned: fromStripeAmount(session.amount_total, currency),
    currency,
    externalId: session.payment_intent ?? session.id,
    paymentTrigger: 'one_time',
    paidAt: new Date(event.created * 1000).toISOString(),
    ...(session.customer ? { customerId: session.customer } : {}),
  };
  const sale = await refusalAsIgnored(() => recordSale(deps, programId, body, credit ?? undefined));
  if ('outcome' in sale) return sale;
  if (session.payment_intent) await linkPayments(deps, programId, sale, [session.payment_intent]);
  return processed(`sale ${sale.id} recorded for the payment`);
}

/** Stripe's billing_reason as the sale's paymentTrigger: a subscription's first invoice, its renewals, or a one-off. */
function paymentTriggerOf(billingReason: string | null | undefined): CreateSaleBody['paymentTrigger'] {
  if (billingReason === 'subscription_create') return 'invoice_paid';
  if (billingReason === 'subscription_cycle' || billingReason === 'subscription_update' || billingReason === 'subscription_threshold')
    return 'subscription_renewed';
  return 'one_time';
}

/** invoice.paid: the invoice becomes a sale now if its customer is attributed, else when a checkout attributes it. */
async function recordInvoiceSale(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const invoice = objectOf(event, Invoice);
  if (invoice.amount_paid === 0) return ignored(`invoice ${invoice.id} paid nothing`);
  return settleInvoice(deps, programId, {
    invoiceId: invoice.id,
    customerId: invoice.customer ?? null,
    email: invoice.customer_email ?? null,
    currency: invoice.currency.toUpperCase(),
    amountPaid: invoice.amount_paid,
    billingReason: invoice.billing_reason ?? null,
    paidAtSeconds: invoice.status_transitions?.paid_at ?? event.created,
    subscriptionId: invoice.parent?.subscription_details?.subscription ?? invoice.subscription ?? null,
    promotionCodeIds: promotionCodeIdsOf(invoice),
    paymentIds: paymentIdsOf(invoice),
  });
}

/**
 * A sale with the invoice id as its externalId (a replay, or the same invoice settled again by a
 * checkout, finds the sale recorded). Unattributed, the invoice is kept under its customer: Stripe
 * does not promise to send checkout.session.completed before the invoice it paid.
 */
async function settleInvoice(
  deps: SaleDependencies,
  programId: string,
  invoice: UnattributedInvoice,
  options = { keepUnattributed: true },
): Promise<Outcome> {
  const attribution = await invoiceAttribution(deps, programId, invoice);
  if (!attribution) {
    if (options.keepUnattributed)
      await deps.repositories.stripeLinks.keepUnattributedInvoice(programId, invoice.customerId ?? invoice.invoiceId, invoice);
    return ignored(
      `invoice ${invoice.invoiceId}: its customer is no referral of the program (yet: a checkout linking it records the sale), and it has no promotional code of the program`,
    );
  }
  const body: CreateSaleBody = {
    ...('promoCode' in attribution ? { promoCode: attribution.promoCode } : {}),
    totalEarned: fromStripeAmount(invoice.amountPaid, invoice.currency),
    currency: invoice.currency,
    externalId: invoice.invoiceId,
    paymentTrigger: paymentTriggerOf(invoice.billingReason),
    paidAt: new Date(invoice.paidAtSeconds * 1000).toISOString(),
    ...(invoice.customerId ? { customerId: invoice.customerId } : {}),
  };
  const sale = await refusalAsIgnored(() => recordSale(deps, programId, body, 'pinned' in attribution ? attribution.pinned : undefined));
  if ('outcome' in sale) return sale;
  // The payments invoice_payment.paid named before the sale existed; those after it find the sale themselves.
  const stored = await deps.repositories.stripeLinks.invoicePayments(programId, invoice.invoiceId);
  await linkPayments(deps, programId, sale, [...invoice.paymentIds, ...stored]);
  return processed(`sale ${sale.id} recorded for invoice ${invoice.invoiceId}`);
}

async function invoiceAttribution(
  deps: SaleDependencies,
  programId: string,
  invoice: UnattributedInvoice,
): Promise<{ pinned: PinnedCredit } | { promoCode: string } | null> {
  const linked = invoice.customerId ? await deps.repositories.stripeLinks.creditOfCustomer(programId, invoice.customerId) : null;
  if (linked) return { pinned: linked };
  const byEmail = invoice.email ? await findReferralByEmail(deps.referrals, programId, invoice.email) : null;
  if (byEmail) return { pinned: { referralId: byEmail.id, method: 'EMAIL' } };
  const remembered = await Promise.all(
    [invoice.subscriptionId, invoice.customerId].map((owner) =>
      owner ? deps.repositories.stripeLinks.promotionCodeOf(programId, owner) : null,
    ),
  );
  const candidates = [...invoice.promotionCodeIds, ...remembered.filter((id): id is string => id !== null)];
  for (const promotionCodeId of new Set(candidates)) {
    const code = await findPromotionalCodeByExternalId(deps.coupons, programId, promotionCodeId);
    if (code) return { promoCode: code.code };
  }
  return null;
}

/** The Stripe promotion codes an invoice of an older API version names (a bare discount id names none). */
function promotionCodeIdsOf(invoice: Invoice): string[] {
  const discounts = [invoice.discount, ...(invoice.discounts ?? [])];
  const ids = discounts.flatMap((discount) =>
    discount && typeof discount !== 'string' && discount.promotion_code ? [discount.promotion_code] : [],
  );
  return [...new Set(ids)];
}

/** The charge and payment intent that paid the invoice, when its API version names them on it. */
function paymentIdsOf(invoice: Invoice): string[] {
  const payments = (invoice.payments?.data ?? []).flatMap(({ payment }) => [payment.charge, payment.payment_intent]);
  return [...new Set([invoice.charge, invoice.payment_intent, ...payments].filter((id): id is string => typeof id === 'string'))];
}

/**
 * invoice_payment.paid: the payment intent or charge that paid an invoice, kept under the invoice
 * and linked to its sale if there is one already; invoice.paid links what was kept when it comes
 * second. Each writes before it reads what the other wrote, so whichever order, one of them links.
 */
async function linkInvoicePayment(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const invoicePayment = objectOf(event, InvoicePayment);
  const paymentIds = [invoicePayment.payment.payment_intent, invoicePayment.payment.charge].filter(
    (id): id is string => typeof id === 'string',
  );
  if (paymentIds.length === 0) return ignored(`invoice payment ${invoicePayment.id} names no charge or payment intent`);
  await deps.repositories.stripeLinks.addInvoicePayments(programId, invoicePayment.invoice, paymentIds);
  const sale = await deps.repositories.sales.byExternalId(programId, invoicePayment.invoice);
  if (!sale) return processed(`${paymentIds.join(', ')} kept for invoice ${invoicePayment.invoice}, which has no sale yet`);
  await linkPayments(deps, programId, toSale(sale), paymentIds);
  return processed(`${paymentIds.join(', ')} linked to sale ${sale._id} of invoice ${invoicePayment.invoice}`);
}

async function linkPayments(deps: SaleDependencies, programId: string, sale: Sale, paymentIds: string[]): Promise<void> {
  const link: StripePaymentLink = {
    saleId: sale.id,
    saleTotalMinor: toMinorUnits(sale.totalEarned, sale.currency),
    currency: sale.currency,
  };
  for (const paymentId of new Set(paymentIds)) await deps.repositories.stripeLinks.linkPayment(programId, paymentId, link);
}

async function saleOfPayment(
  deps: SaleDependencies,
  programId: string,
  paymentIds: (string | null | undefined)[],
): Promise<StripePaymentLink | null> {
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
 * takes back the cumulative share, not a share of a share. Stripe may deliver an earlier refund's
 * event after a later one: the highest amount refunded is kept per charge, and a lower one changes nothing.
 */
async function refundSale(deps: SaleDependencies, programId: string, event: StripeEvent): Promise<Outcome> {
  const charge = objectOf(event, Charge);
  const link = await saleOfPayment(deps, programId, [charge.id, charge.payment_intent]);
  if (!link) return ignored(`charge ${charge.id} paid no sale of this program`);
  if (charge.amount_refunded === 0) return ignored(`charge ${charge.id} has nothing refunded`);
  let refunded = await deps.repositories.stripeLinks.raiseRefunded(programId, charge.id, charge.amount_refunded);
  if (refunded > charge.amount_refunded)
    return ignored(`charge ${charge.id}: a later refund (${refunded} of ${charge.amount}) was taken into account already`);
  // A higher refund handled at the same moment may have written its amount before this one: the last
  // writer checks the highest once more, so the sale ends at the highest refund whatever the interleaving.
  for (;;) {
    const outcome = await applyRefund(deps, programId, link, charge, refunded);
    const highest = await deps.repositories.stripeLinks.refundedOf(programId, charge.id);
    if (highest <= refunded || outcome.outcome === 'ignored') return outcome;
    refunded = highest;
  }
}

async function applyRefund(
  deps: SaleDependencies,
  programId: string,
  link: StripePaymentLink,
  charge: { id: string; amount: number },
  refundedMinor: number,
): Promise<Outcome> {
  if (refundedMinor >= charge.amount) return reverse(deps, programId, link.saleId, `charge ${charge.id} refunded in full`);
  const keptPercent = ((charge.amount - refundedMinor) / charge.amount) * 100;
  const totalEarned = fromMinorUnits(percentOfMinorUnits(link.saleTotalMinor, keptPercent), link.currency);
  const updated = await refusalAsIgnored(() =>
    updateSale(deps.repositories, programId, { saleId: link.saleId, totalEarned }, { refund: true }),
  );
  if ('outcome' in updated) return updated;
  return processed(
    `sale ${link.saleId} is now ${totalEarned} ${link.currency} after a refund of ${refundedMinor} of ${charge.amount} on charge ${charge.id}`,
  );
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
