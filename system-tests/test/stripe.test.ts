import { randomBytes, randomUUID } from 'node:crypto';
import { eventually } from '@affiliate/platform/testing';
import Stripe from 'stripe';
import { okBody as ok, type Api } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * The Stripe integration end to end (issue 5): Stripe's events, in the shapes Stripe sends them and
 * signed as Stripe signs them (the official package's test header), posted to the gateway's public
 * webhook route, become referrals, sales and reversals, which reach a subscriber as signed
 * sale.* webhooks. Nothing here calls Stripe. Each test has a program of its own.
 */
const world = systemWithSubscriber();

type AnyObject = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const stripeId = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
const secondsAgo = (seconds = 0) => Math.floor(Date.now() / 1000) - seconds;

/** A Stripe event envelope as webhook endpoints receive it (a snapshot event, of the package's API version unless told). */
function stripeEvent(type: string, object: AnyObject, apiVersion: string = Stripe.API_VERSION): AnyObject {
  return {
    id: stripeId('evt'),
    object: 'event',
    api_version: apiVersion,
    created: secondsAgo(),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: stripeId('req'), idempotency_key: randomUUID() },
    type,
  };
}

type CheckoutFields = {
  customer: string | null;
  email: string;
  clientReferenceId?: string | null;
  metadata?: Record<string, string>;
  mode?: 'subscription' | 'payment';
  amountTotal?: number;
  currency?: string;
  paymentIntent?: string | null;
  invoice?: string | null;
  promotionCode?: string;
  /** The promotion code in the expanded total_details.breakdown instead of `discounts`. */
  expandedBreakdown?: boolean;
};

/**
 * A completed Checkout Session of the current API version. In subscription mode it names the
 * subscription and its first invoice; a one-off payment (payment mode) names its payment intent and,
 * for a guest, no customer.
 */
function checkoutSession(fields: CheckoutFields): AnyObject {
  const mode = fields.mode ?? 'subscription';
  const amount = fields.amountTotal ?? 10000;
  const discount = fields.promotionCode
    ? {
        id: stripeId('di'),
        object: 'discount',
        coupon: null,
        customer: fields.customer,
        end: null,
        invoice: null,
        invoice_item: null,
        promotion_code: fields.promotionCode,
        start: secondsAgo(120),
        subscription: null,
      }
    : null;
  return {
    id: stripeId('cs_test'),
    object: 'checkout.session',
    amount_subtotal: amount,
    amount_total: amount,
    cancel_url: 'https://shop.example/cancel',
    client_reference_id: fields.clientReferenceId ?? null,
    created: secondsAgo(120),
    currency: fields.currency ?? 'usd',
    customer: fields.customer,
    customer_creation: fields.customer ? 'always' : 'if_required',
    customer_details: { address: null, email: fields.email, name: 'Ada Lovelace', phone: null, tax_exempt: 'none', tax_ids: [] },
    customer_email: null,
    discounts: fields.promotionCode && !fields.expandedBreakdown ? [{ coupon: null, promotion_code: fields.promotionCode }] : [],
    expires_at: secondsAgo(-86_400),
    invoice: fields.invoice === undefined ? (mode === 'subscription' ? stripeId('in') : null) : fields.invoice,
    livemode: false,
    metadata: fields.metadata ?? {},
    mode,
    payment_intent: fields.paymentIntent === undefined ? (mode === 'payment' ? stripeId('pi') : null) : fields.paymentIntent,
    payment_status: 'paid',
    status: 'complete',
    subscription: mode === 'subscription' ? stripeId('sub') : null,
    success_url: 'https://shop.example/thanks',
    total_details: {
      amount_discount: 0,
      amount_shipping: 0,
      amount_tax: 0,
      ...(fields.expandedBreakdown ? { breakdown: { discounts: discount ? [{ amount: 0, discount }] : [], taxes: [] } } : {}),
    },
    url: null,
  };
}

type InvoiceFields = {
  customer: string;
  email: string;
  amountPaid: number;
  currency?: string;
  billingReason?: string;
  subscription?: string;
  /** Discount ids: the current API version names them bare (`di_…`), never expanded in a webhook. */
  discounts?: string[];
};

/**
 * An invoice of the current API version (since 2025-03-31.basil), as its webhook carries it: no
 * `charge`, `payment_intent`, `subscription` or `discount`, no `payments` list, discounts as bare
 * ids, the subscription under `parent.subscription_details`.
 */
function invoice(fields: InvoiceFields): AnyObject {
  const id = stripeId('in');
  const currency = fields.currency ?? 'usd';
  const paidAt = secondsAgo(60);
  return {
    id,
    object: 'invoice',
    account_country: 'US',
    amount_due: fields.amountPaid,
    amount_paid: fields.amountPaid,
    amount_remaining: 0,
    attempt_count: 1,
    attempted: true,
    billing_reason: fields.billingReason ?? 'subscription_create',
    collection_method: 'charge_automatically',
    created: paidAt - 5,
    currency,
    customer: fields.customer,
    customer_email: fields.email,
    customer_name: 'Ada Lovelace',
    discounts: fields.discounts ?? [],
    lines: { object: 'list', data: [], has_more: false, url: `/v1/invoices/${id}/lines` },
    livemode: false,
    metadata: {},
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { metadata: {}, subscription: fields.subscription ?? stripeId('sub') },
    },
    status: 'paid',
    status_transitions: { finalized_at: paidAt - 5, marked_uncollectible_at: null, paid_at: paidAt, voided_at: null },
    subtotal: fields.amountPaid,
    total: fields.amountPaid,
  };
}

/** invoice_payment.paid's object: which payment intent paid which invoice. */
function invoicePayment(paid: AnyObject, paymentIntent: string): AnyObject {
  return {
    id: stripeId('inpay'),
    object: 'invoice_payment',
    amount_paid: paid.amount_paid,
    amount_requested: paid.amount_paid,
    created: paid.status_transitions.paid_at,
    currency: paid.currency,
    invoice: paid.id,
    is_default: true,
    livemode: false,
    payment: { type: 'payment_intent', payment_intent: paymentIntent },
    status: 'paid',
    status_transitions: { canceled_at: null, paid_at: paid.status_transitions.paid_at },
  };
}

function charge(fields: { paymentIntent: string; amount: number; amountRefunded: number; customer: string }): AnyObject {
  return {
    id: stripeId('ch'),
    object: 'charge',
    amount: fields.amount,
    amount_captured: fields.amount,
    amount_refunded: fields.amountRefunded,
    captured: true,
    created: secondsAgo(60),
    currency: 'usd',
    customer: fields.customer,
    disputed: false,
    livemode: false,
    metadata: {},
    paid: true,
    payment_intent: fields.paymentIntent,
    refunded: fields.amountRefunded >= fields.amount,
    status: 'succeeded',
  };
}

function dispute(fields: { charge: string; paymentIntent: string; amount: number }): AnyObject {
  return {
    id: stripeId('dp'),
    object: 'dispute',
    amount: fields.amount,
    balance_transactions: [],
    charge: fields.charge,
    created: secondsAgo(),
    currency: 'usd',
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: fields.paymentIntent,
    reason: 'fraudulent',
    status: 'needs_response',
  };
}

type Answer = { status: number; body: AnyObject };

/** What Stripe does: POST the event, pretty-printed, with a Stripe-Signature made with the secret. */
async function post(programId: string, event: AnyObject, signWith: string | null): Promise<Answer> {
  const payload = JSON.stringify(event, null, 2);
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  };
  if (signWith !== null) headers['stripe-signature'] = Stripe.webhooks.generateTestHeaderString({ payload, secret: signWith });
  const response = await fetch(`${world.system.gatewayUrl}/integrations/stripe/${programId}/webhooks`, {
    method: 'POST',
    headers,
    body: payload,
  });
  return { status: response.status, body: (await response.json()) as AnyObject };
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

type Connected = {
  programId: string;
  key: string;
  api: Api;
  secret: string;
  affiliate: AnyObject;
  send: (event: AnyObject) => Promise<Answer>;
};

/** A program connected to Stripe, paying 20 % on every payment, whose sale.* webhooks reach the subscriber. */
async function connectedProgram(): Promise<Connected> {
  const { programId, key, api } = await world.system.createProgram();
  const secret = newSecret();
  await ok(api.put('/integrations/stripe', { webhookSecret: secret }));
  await ok(api.post('/webhook-endpoints', { url: world.hooks, eventTypes: ['sale.created', 'sale.updated', 'sale.deleted'] }));
  await ok(
    api.post('/commission-plans', {
      name: 'Stripe',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  const slug = `ada-${randomUUID().slice(0, 8)}`;
  const affiliate = await ok(
    api.post('/affiliates', { firstName: 'Ada', lastName: 'Lovelace', email: `${slug}@example.com`, affiliateLink: slug }),
  );
  return { programId, key, api, secret, affiliate: { ...affiliate, slug }, send: (event) => post(programId, event, secret) };
}

/** A customer the program already knows as a referral of its affiliate (the email path). */
async function referredCustomer(program: Connected): Promise<{ customer: string; email: string; referral: AnyObject }> {
  const email = `customer-${randomUUID().slice(0, 8)}@example.com`;
  const referral = await ok(program.api.post('/referrals', { affiliateId: program.affiliate.id, email }));
  return { customer: stripeId('cus'), email, referral };
}

/**
 * POST /clicks without the drift check: on this branch the click answer's `reason: null` is not yet
 * in the published document (the tracking work in progress elsewhere changes both); only clickId is used here.
 */
async function recordClick(program: Connected, fields: { visitorId?: string; slug?: string } = {}): Promise<{ clickId: number }> {
  const response = await fetch(`${world.system.gatewayUrl}/api/v1/clicks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${program.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ link: fields.slug ?? program.affiliate.slug, ...(fields.visitorId ? { visitorId: fields.visitorId } : {}) }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { clickId: number };
}

const deliveries = (type: string, saleId: string) =>
  world.subscriber
    .events(type)
    .filter((delivery) => delivery.body.data.id === saleId)
    .map((delivery) => delivery.body.data);
const sales = async (api: Api) => ok(api.get('/sales'));

test('the Stripe webhook secret is never returned: GET and PUT show only its last 4 characters and the webhook path, with Cache-Control: no-store', async () => {
  const { programId, api } = await world.system.createProgram();
  const before = await api.get('/integrations/stripe');
  expect(before.body).toEqual({ configured: false, webhookSecretLast4: null, webhookUrl: `/integrations/stripe/${programId}/webhooks` });
  const secret = newSecret();
  const answers = [await api.put('/integrations/stripe', { webhookSecret: secret }), await api.get('/integrations/stripe')];
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      configured: true,
      webhookSecretLast4: secret.slice(-4),
      webhookUrl: `/integrations/stripe/${programId}/webhooks`,
    });
    expect(JSON.stringify(answer.body)).not.toContain(secret.slice(6, -4));
  }
  expect(before.headers.get('cache-control')).toBe('no-store');
  const refused = await api.put('/integrations/stripe', { webhookSecret: 'sk_live_not_a_webhook_secret' });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatch(/webhookSecret/);
  expect((await api.get('/integrations/stripe')).body.webhookSecretLast4).toBe(secret.slice(-4));
});

test('a webhook with a forged or missing signature, or for a program with no secret, is 400 and records nothing', async () => {
  const program = await connectedProgram();
  const { customer, email } = await referredCustomer(program);
  const paid = stripeEvent('invoice.paid', invoice({ customer, email, amountPaid: 5000 }));
  const forged = await post(program.programId, paid, newSecret());
  const unsigned = await post(program.programId, paid, null);
  for (const answer of [forged, unsigned]) {
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/Stripe-Signature/);
  }
  const notConnected = await world.system.createProgram();
  const noSecret = await post(notConnected.programId, paid, program.secret);
  expect(noSecret.status).toBe(400);
  expect(noSecret.body.error).toMatch(/PUT \/api\/v1\/integrations\/stripe/);
  expect(await sales(program.api)).toEqual([]);
  expect(await sales(notConnected.api)).toEqual([]);
  // The same event, signed rightly afterwards, is handled: the refusals claimed nothing.
  expect((await program.send(paid)).body).toMatchObject({ received: true, outcome: 'processed' });
});

test("another program's Stripe secret cannot post into this program", async () => {
  const victim = await connectedProgram();
  const attacker = await connectedProgram();
  const { customer, email } = await referredCustomer(victim);
  const answer = await post(victim.programId, stripeEvent('invoice.paid', invoice({ customer, email, amountPaid: 5000 })), attacker.secret);
  expect(answer.status).toBe(400);
  expect(await sales(victim.api)).toEqual([]);
  expect(await sales(attacker.api)).toEqual([]);
});

test('checkout.session.completed with a click id creates the referral from the click, and the customer’s invoice.paid becomes a sale of it, sent as sale.created', async () => {
  const program = await connectedProgram();
  const click = await recordClick(program);
  const customer = stripeId('cus');
  const email = `buyer-${randomUUID().slice(0, 8)}@example.com`;
  const checkout = await program.send(
    stripeEvent('checkout.session.completed', checkoutSession({ customer, email, clientReferenceId: String(click.clickId) })),
  );
  expect(checkout).toMatchObject({ status: 200, body: { received: true, outcome: 'processed' } });
  const [referral] = await ok(program.api.get(`/referrals?email=${encodeURIComponent(email)}`));
  expect(referral).toMatchObject({ affiliateId: program.affiliate.id, clickId: click.clickId, name: 'Ada Lovelace' });

  // The invoice names another email: the customer link, not the email, attributes it.
  const paid = invoice({ customer, email: `billing-${randomUUID().slice(0, 8)}@example.com`, amountPaid: 10000 });
  expect((await program.send(stripeEvent('invoice.paid', paid))).body).toMatchObject({ outcome: 'processed' });
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({
    referralId: referral.id,
    affiliateId: program.affiliate.id,
    externalId: paid.id,
    customerId: customer,
    totalEarned: 100,
    currency: 'USD',
    commissionEarned: 20,
  });
  expect(sale.paidAt).toBe(new Date(paid.status_transitions.paid_at * 1000).toISOString());
  await eventually(
    () =>
      expect(deliveries('sale.created', sale.id)).toEqual([
        expect.objectContaining({
          referral: expect.objectContaining({ id: referral.id }),
          affiliate: expect.objectContaining({ id: program.affiliate.id }),
        }),
      ]),
    20_000,
  );
});

test("invoice.paid: a subscription's first invoice is paymentTrigger invoice_paid, a renewal subscription_renewed", async () => {
  const program = await connectedProgram();
  const { customer, email, referral } = await referredCustomer(program);
  const first = invoice({ customer, email, amountPaid: 2900, billingReason: 'subscription_create' });
  const renewal = invoice({ customer, email, amountPaid: 2900, billingReason: 'subscription_cycle' });
  await program.send(stripeEvent('invoice.paid', first));
  await program.send(stripeEvent('invoice.paid', renewal));
  const byInvoice = Object.fromEntries((await sales(program.api)).map((sale: AnyObject) => [sale.externalId, sale]));
  expect(byInvoice[first.id]).toMatchObject({ paymentTrigger: 'invoice_paid', referralId: referral.id, totalEarned: 29 });
  expect(byInvoice[renewal.id]).toMatchObject({ paymentTrigger: 'subscription_renewed', referralId: referral.id, totalEarned: 29 });
  await eventually(
    () =>
      expect(deliveries('sale.created', byInvoice[renewal.id].id)).toEqual([
        expect.objectContaining({ paymentTrigger: 'subscription_renewed' }),
      ]),
    20_000,
  );
});

test('a Stripe event delivered again, or the same invoice in another event, records one sale and one sale.created', async () => {
  const program = await connectedProgram();
  const { customer, email } = await referredCustomer(program);
  const paid = invoice({ customer, email, amountPaid: 4200 });
  const event = stripeEvent('invoice.paid', paid);
  expect((await program.send(event)).body).toMatchObject({ outcome: 'processed' });
  expect(await program.send(event)).toMatchObject({ status: 200, body: { received: true, outcome: 'replayed' } });
  expect((await program.send(stripeEvent('invoice.paid', paid))).status).toBe(200);
  const recorded = await sales(program.api);
  expect(recorded).toHaveLength(1);
  await eventually(() => expect(deliveries('sale.created', recorded[0].id)).toHaveLength(1), 20_000);
});

test('events of types the integration does not use answer 200 and change nothing', async () => {
  const program = await connectedProgram();
  const { customer, email } = await referredCustomer(program);
  const answer = await program.send(
    stripeEvent('customer.created', { id: customer, object: 'customer', email, created: secondsAgo(), livemode: false, metadata: {} }),
  );
  expect(answer).toMatchObject({ status: 200, body: { received: true, outcome: 'ignored' } });
  expect(await sales(program.api)).toEqual([]);
});

test("a zero-decimal currency's amount is taken as whole units: 5000 JPY is a sale of 5000 JPY", async () => {
  const program = await connectedProgram();
  const { customer, email } = await referredCustomer(program);
  await program.send(stripeEvent('invoice.paid', invoice({ customer, email, amountPaid: 5000, currency: 'jpy' })));
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({ totalEarned: 5000, currency: 'JPY', commissionEarned: 1000 });
});

test('a currency that is not an active ISO 4217 code is refused with a 400 naming it, and records no sale', async () => {
  const program = await connectedProgram();
  const { customer, email } = await referredCustomer(program);
  const paidInvoice = await program.send(stripeEvent('invoice.paid', invoice({ customer, email, amountPaid: 5000, currency: 'xyz' })));
  expect(paidInvoice).toMatchObject({
    status: 400,
    body: { error: expect.stringContaining('XYZ is not an active ISO 4217 currency code') },
  });
  const session = await program.send(
    stripeEvent('checkout.session.completed', checkoutSession({ customer, email, mode: 'payment', currency: 'abc' })),
  );
  expect(session).toMatchObject({ status: 400, body: { error: expect.stringContaining('ABC is not an active ISO 4217 currency code') } });
  expect(await sales(program.api)).toEqual([]);
});

/** A promotional code of the program whose externalId is a Stripe promotion code, held by the program's affiliate. */
async function stripePromotionCode(program: Connected): Promise<{ promotionCodeId: string; code: AnyObject }> {
  const promotionCodeId = stripeId('promo');
  const coupon = await ok(program.api.post('/coupons', { name: 'Launch', percentOff: 10 }));
  const code = await ok(
    program.api.post('/promotional-codes', {
      couponId: coupon.id,
      code: `LAUNCH${randomUUID().slice(0, 4).toUpperCase()}`,
      affiliateId: program.affiliate.id,
      externalId: promotionCodeId,
    }),
  );
  return { promotionCodeId, code };
}

test("a promotion code used at checkout attributes the customer's invoices, whose discounts Stripe names by bare ids", async () => {
  const program = await connectedProgram();
  const { promotionCodeId, code } = await stripePromotionCode(program);
  // Named in the session's discounts, and, for another customer, only in the expanded total_details breakdown.
  for (const expandedBreakdown of [false, true]) {
    const customer = stripeId('cus');
    const email = `nobody-${randomUUID().slice(0, 8)}@example.com`;
    const session = checkoutSession({ customer, email, promotionCode: promotionCodeId, expandedBreakdown });
    expect((await program.send(stripeEvent('checkout.session.completed', session))).body).toMatchObject({ outcome: 'processed' });
    const paid = invoice({ customer, email, amountPaid: 9000, subscription: session.subscription, discounts: [stripeId('di')] });
    expect((await program.send(stripeEvent('invoice.paid', paid))).body).toMatchObject({ outcome: 'processed' });
    const sale = (await sales(program.api)).find((recorded: AnyObject) => recorded.externalId === paid.id);
    expect(sale).toMatchObject({
      promotionalCodeId: code.id,
      promoCode: code.code,
      affiliateId: program.affiliate.id,
      referralId: null,
      customerId: customer,
      totalEarned: 90,
    });
    expect(sale.attribution).toMatchObject({ method: 'PROMO_CODE' });
  }
});

test("an older API version's invoice (charge, payment_intent and the discount with its promotion code on the invoice) is read too", async () => {
  const program = await connectedProgram();
  const { promotionCodeId, code } = await stripePromotionCode(program);
  const customer = stripeId('cus');
  const chargeId = stripeId('ch');
  const paymentIntent = stripeId('pi');
  const id = stripeId('in');
  const discount = {
    id: stripeId('di'),
    object: 'discount',
    coupon: { id: 'launch', object: 'coupon', percent_off: 10 },
    customer,
    end: null,
    invoice: null,
    invoice_item: null,
    promotion_code: promotionCodeId,
    start: secondsAgo(60),
    subscription: null,
  };
  // As a 2024-06-20 endpoint receives it.
  const older = {
    id,
    object: 'invoice',
    amount_due: 9000,
    amount_paid: 9000,
    amount_remaining: 0,
    billing_reason: 'subscription_create',
    charge: chargeId,
    currency: 'usd',
    customer,
    customer_email: `nobody-${randomUUID().slice(0, 8)}@example.com`,
    discount,
    discounts: [discount.id],
    livemode: false,
    paid: true,
    payment_intent: paymentIntent,
    status: 'paid',
    status_transitions: { finalized_at: secondsAgo(70), marked_uncollectible_at: null, paid_at: secondsAgo(60), voided_at: null },
    subscription: stripeId('sub'),
  };
  expect((await program.send(stripeEvent('invoice.paid', older, '2024-06-20'))).body).toMatchObject({ outcome: 'processed' });
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({ externalId: id, promotionalCodeId: code.id, affiliateId: program.affiliate.id, totalEarned: 90 });
  const refunded = { ...charge({ paymentIntent, customer, amount: 9000, amountRefunded: 9000 }), id: chargeId };
  expect((await program.send(stripeEvent('charge.refunded', refunded, '2024-06-20'))).body).toMatchObject({ outcome: 'processed' });
  expect(await sales(program.api)).toEqual([]);
});

test('an invoice with neither a referred customer nor a code of the program answers 200 and records nothing', async () => {
  const program = await connectedProgram();
  const answer = await program.send(
    stripeEvent(
      'invoice.paid',
      invoice({ customer: stripeId('cus'), email: `stranger-${randomUUID().slice(0, 8)}@example.com`, amountPaid: 9000 }),
    ),
  );
  expect(answer).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
  expect(await sales(program.api)).toEqual([]);
});

/** A sale of 100 USD paid through `paymentIntent`, commission 20. */
async function paidSale(program: Connected): Promise<{ sale: AnyObject; customer: string; paymentIntent: string }> {
  const { customer, email } = await referredCustomer(program);
  const paymentIntent = stripeId('pi');
  const paid = invoice({ customer, email, amountPaid: 10000 });
  await program.send(stripeEvent('invoice.paid', paid));
  expect((await program.send(stripeEvent('invoice_payment.paid', invoicePayment(paid, paymentIntent)))).body).toMatchObject({
    outcome: 'processed',
  });
  const [sale] = await sales(program.api);
  return { sale, customer, paymentIntent };
}

test('a full refund (charge.refunded) reverses the sale and sends sale.deleted', async () => {
  const program = await connectedProgram();
  const { sale, customer, paymentIntent } = await paidSale(program);
  const answer = await program.send(
    stripeEvent('charge.refunded', charge({ paymentIntent, customer, amount: 10000, amountRefunded: 10000 })),
  );
  expect(answer.body).toMatchObject({ outcome: 'processed' });
  expect(await sales(program.api)).toEqual([]);
  await eventually(() => expect(deliveries('sale.deleted', sale.id)).toEqual([{ id: sale.id }]), 20_000);
});

test('partial refunds scale the commission by the cumulative refunded share, each sent as sale.updated', async () => {
  const program = await connectedProgram();
  const { sale, customer, paymentIntent } = await paidSale(program);
  const chargeOf = (amountRefunded: number) => charge({ paymentIntent, customer, amount: 10000, amountRefunded });
  await program.send(stripeEvent('charge.refunded', chargeOf(2500)));
  expect(await ok(program.api.get(`/sales?id=${sale.id}`))).toMatchObject({ totalEarned: 75, commissionEarned: 15 });
  // Stripe's amount_refunded is the total so far: half is refunded now, so half the sale is left, not half of 75.
  await program.send(stripeEvent('charge.refunded', chargeOf(5000)));
  expect(await ok(program.api.get(`/sales?id=${sale.id}`))).toMatchObject({ totalEarned: 50, commissionEarned: 10 });
  await eventually(() => expect(deliveries('sale.updated', sale.id).map((update) => update.commissionEarned)).toEqual([15, 10]), 20_000);
});

const statementOf = (program: Connected, from: Date, to?: Date) =>
  ok(
    program.api.get(
      `/affiliates/statement?affiliateId=${program.affiliate.id}&currency=USD&from=${from.toISOString()}${to ? `&to=${to.toISOString()}` : ''}`,
    ),
  );
const entriesSum = (entries: { amount: number }[]) => Math.round(entries.reduce((total, entry) => total + entry.amount * 100, 0)) / 100;

test('a partial refund after payout is clawed back: the paid commission stays, an ADJUSTED entry takes back the refunded share, and the next payout offsets the negative balance', async () => {
  const program = await connectedProgram();
  const start = new Date(Date.now() - 1000);
  const { sale, customer, paymentIntent } = await paidSale(program);
  const [payout] = await ok(program.api.post('/payouts', {}));
  expect(payout.amount).toBe(20);
  await ok(program.api.put('/payouts', { payoutId: payout.id, status: 'PAID' }));
  const chargeId = stripeId('ch');
  const chargeOf = (amountRefunded: number) => ({ ...charge({ paymentIntent, customer, amount: 10000, amountRefunded }), id: chargeId });

  expect((await program.send(stripeEvent('charge.refunded', chargeOf(2500)))).body).toMatchObject({ outcome: 'processed' });
  expect((await program.send(stripeEvent('charge.refunded', chargeOf(5000)))).body).toMatchObject({ outcome: 'processed' });
  const refunded = await ok(program.api.get(`/sales?id=${sale.id}`));
  expect(refunded).toMatchObject({ totalEarned: 50, commissionEarned: 10 });
  const [paid, ...adjustments] = refunded.commissions;
  expect(paid).toMatchObject({ status: 'PAID', amount: 20, payoutId: payout.id });
  // The cumulative refund takes back half in all: 5, then the 5 more of the second refund, never a share of a share.
  expect(adjustments).toEqual([
    expect.objectContaining({ amount: -5, adjusts: paid.id }),
    expect.objectContaining({ amount: -5, adjusts: paid.id }),
  ]);

  const owing = await statementOf(program, start);
  expect(owing.entries.map((entry: { type: string }) => entry.type)).toEqual(['EARNED', 'PAID_OUT', 'ADJUSTED', 'ADJUSTED']);
  expect(owing).toMatchObject({ openingBalance: 0, closingBalance: -10 });
  expect(entriesSum(owing.entries)).toBe(owing.closingBalance - owing.openingBalance);
  expect(await ok(program.api.post('/payouts', {}))).toEqual([]);

  // The next sale's 20 pays only what is left after the 10 taken back: never an overpayment.
  await paidSale(program);
  const [offset] = await ok(program.api.post('/payouts', {}));
  expect(offset.amount).toBe(10);
  await ok(program.api.put('/payouts', { payoutId: offset.id, status: 'PAID' }));
  // Refunded in full at last: only the 10 the partial refunds left is taken back.
  expect((await program.send(stripeEvent('charge.refunded', chargeOf(10000)))).body).toMatchObject({ outcome: 'processed' });
  const settled = await statementOf(program, start);
  expect(
    entriesSum(settled.entries.filter((entry: { type: string; saleId: string }) => entry.type === 'ADJUSTED' && entry.saleId === sale.id)),
  ).toBe(-20);
  expect(settled.closingBalance).toBe(-10);
  expect(entriesSum(settled.entries)).toBe(settled.closingBalance - settled.openingBalance);
});

test('a partial refund before payout is an ADJUSTED entry when it happens: a statement of a period before it still shows what was earned then', async () => {
  const program = await connectedProgram();
  const start = new Date(Date.now() - 1000);
  const { sale, customer, paymentIntent } = await paidSale(program);
  const beforeRefund = new Date();
  const stated = await statementOf(program, start, beforeRefund);
  expect(
    (await program.send(stripeEvent('charge.refunded', charge({ paymentIntent, customer, amount: 10000, amountRefunded: 2500 })))).body,
  ).toMatchObject({ outcome: 'processed' });
  expect(await ok(program.api.get(`/sales?id=${sale.id}`))).toMatchObject({
    commissionEarned: 15,
    commissions: [expect.objectContaining({ amount: 15, status: 'DUE' })],
  });
  expect(await statementOf(program, start, beforeRefund)).toEqual(stated);
  expect(stated).toMatchObject({ closingBalance: 20, entries: [expect.objectContaining({ type: 'EARNED', amount: 20 })] });
  const whole = await statementOf(program, start);
  expect(whole.entries.map((entry: { type: string; amount: number }) => [entry.type, entry.amount])).toEqual([
    ['EARNED', 20],
    ['ADJUSTED', -5],
  ]);
  expect(whole.closingBalance).toBe(15);
  const [payout] = await ok(program.api.post('/payouts', {}));
  expect(payout.amount).toBe(15);
});

test('a dispute (charge.dispute.created) reverses the sale and sends sale.deleted', async () => {
  const program = await connectedProgram();
  const { sale, paymentIntent } = await paidSale(program);
  const answer = await program.send(
    stripeEvent('charge.dispute.created', dispute({ charge: stripeId('ch'), paymentIntent, amount: 10000 })),
  );
  expect(answer.body).toMatchObject({ outcome: 'processed' });
  expect(await sales(program.api)).toEqual([]);
  await eventually(() => expect(deliveries('sale.deleted', sale.id)).toEqual([{ id: sale.id }]), 20_000);
});

test('an event whose handling failed midway is handled when Stripe sends it again: the claim is given back, not kept', async () => {
  const program = await connectedProgram();
  const { customer, email } = await referredCustomer(program);
  const event = stripeEvent('invoice.paid', invoice({ customer, email, amountPaid: 3000 }));
  await world.system.kill('referral');
  try {
    const failed = await program.send(event);
    expect(failed.status).toBe(503);
  } finally {
    await world.system.launch('referral');
    await world.system.waitReady('referral');
  }
  // Stripe retries a failed delivery; the retry is handled as soon as the referral service is back, never refused as "being handled".
  const retries: number[] = [];
  await eventually(
    async () => {
      const answer = await program.send(event);
      retries.push(answer.status);
      expect(answer.body).toMatchObject({ outcome: 'processed' });
    },
    30_000,
    500,
  );
  expect(retries).not.toContain(409);
  expect(await sales(program.api)).toHaveLength(1);
});

test('a refund finds its sale through invoice_payment.paid, whichever of it and invoice.paid Stripe delivers first', async () => {
  const program = await connectedProgram();
  const { customer, email } = await referredCustomer(program);
  const paymentIntent = stripeId('pi');
  const paid = invoice({ customer, email, amountPaid: 10000 });
  expect((await program.send(stripeEvent('invoice_payment.paid', invoicePayment(paid, paymentIntent)))).body).toMatchObject({
    outcome: 'processed',
  });
  expect((await program.send(stripeEvent('invoice.paid', paid))).body).toMatchObject({ outcome: 'processed' });
  const [sale] = await sales(program.api);
  expect(
    (await program.send(stripeEvent('charge.refunded', charge({ paymentIntent, customer, amount: 10000, amountRefunded: 10000 })))).body,
  ).toMatchObject({ outcome: 'processed' });
  expect(await sales(program.api)).toEqual([]);
  await eventually(() => expect(deliveries('sale.deleted', sale.id)).toEqual([{ id: sale.id }]), 20_000);
});

test('an invoice paid before its checkout completed becomes a sale once the checkout links the customer, and only once', async () => {
  const program = await connectedProgram();
  const click = await recordClick(program);
  const customer = stripeId('cus');
  const email = `early-${randomUUID().slice(0, 8)}@example.com`;
  const paid = invoice({ customer, email, amountPaid: 4900 });
  const invoiceEvent = stripeEvent('invoice.paid', paid);
  expect((await program.send(invoiceEvent)).body).toMatchObject({ outcome: 'ignored' });
  expect(await sales(program.api)).toEqual([]);

  const session = checkoutSession({ customer, email, clientReferenceId: String(click.clickId), invoice: paid.id });
  expect((await program.send(stripeEvent('checkout.session.completed', session))).body).toMatchObject({ outcome: 'processed' });
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({
    externalId: paid.id,
    affiliateId: program.affiliate.id,
    totalEarned: 49,
    customerId: customer,
    paymentTrigger: 'invoice_paid',
  });
  // Stripe retrying the invoice, or the checkout again, records nothing more.
  await program.send(stripeEvent('invoice.paid', paid));
  await program.send(stripeEvent('checkout.session.completed', session));
  expect(await sales(program.api)).toHaveLength(1);
  await eventually(() => expect(deliveries('sale.created', sale.id)).toHaveLength(1), 20_000);
});

/**
 * The checkout, then the first invoice of its subscription: the sale it became. The invoice is
 * billed to another address, so only the checkout's link of the customer can attribute it.
 */
async function saleOfCheckout(
  program: Connected,
  fields: Omit<CheckoutFields, 'customer' | 'email'> & { email?: string },
): Promise<AnyObject> {
  const customer = stripeId('cus');
  const email = fields.email ?? `buyer-${randomUUID().slice(0, 8)}@example.com`;
  const session = checkoutSession({ ...fields, customer, email });
  expect((await program.send(stripeEvent('checkout.session.completed', session))).body).toMatchObject({
    received: true,
    outcome: 'processed',
  });
  const paid = invoice({ customer, email: `billing-${randomUUID().slice(0, 8)}@example.com`, amountPaid: 10000 });
  await program.send(stripeEvent('invoice.paid', paid));
  return (await sales(program.api)).find((sale: AnyObject) => sale.externalId === paid.id);
}

async function secondAffiliate(program: Connected): Promise<AnyObject> {
  const slug = `grace-${randomUUID().slice(0, 8)}`;
  const affiliate = await ok(
    program.api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: `${slug}@example.com`, affiliateLink: slug }),
  );
  return { ...affiliate, slug };
}

test("checkout metadata affiliate_click_id credits the click, when client_reference_id is the shop's own id", async () => {
  const program = await connectedProgram();
  const click = await recordClick(program);
  const sale = await saleOfCheckout(program, { clientReferenceId: 'order_88121', metadata: { affiliate_click_id: String(click.clickId) } });
  expect(sale).toMatchObject({ affiliateId: program.affiliate.id, attribution: expect.objectContaining({ clickId: click.clickId }) });
  const referral = await ok(program.api.get(`/referrals?id=${sale.referralId}`));
  expect(referral.attribution).toMatchObject({ method: 'CLICK', clickId: click.clickId });
});

test("checkout metadata affiliate_visitor_id credits the visitor's click, when client_reference_id is the shop's own id", async () => {
  const program = await connectedProgram();
  const visitorId = `visitor-${randomUUID().slice(0, 12)}`;
  const click = await recordClick(program, { visitorId });
  const sale = await saleOfCheckout(program, { clientReferenceId: 'cart-55123-abc', metadata: { affiliate_visitor_id: visitorId } });
  expect(sale).toMatchObject({ affiliateId: program.affiliate.id, attribution: expect.objectContaining({ clickId: click.clickId }) });
});

test("a visitor id as client_reference_id credits the visitor's click, over an earlier referral of the customer's email by another affiliate", async () => {
  const program = await connectedProgram();
  const { email } = await referredCustomer(program);
  const grace = await secondAffiliate(program);
  const visitorId = `visitor-${randomUUID().slice(0, 12)}`;
  const click = await recordClick(program, { visitorId, slug: grace.slug });
  const sale = await saleOfCheckout(program, { email, clientReferenceId: visitorId });
  expect(sale).toMatchObject({
    affiliateId: grace.id,
    referralId: null,
    attribution: expect.objectContaining({ method: 'VISITOR', clickId: click.clickId, affiliateId: grace.id }),
  });
});

test("an all-digit shop id in client_reference_id that is no click of the program falls back to the customer's email, and the sale says EMAIL", async () => {
  const program = await connectedProgram();
  const { email, referral } = await referredCustomer(program);
  const sale = await saleOfCheckout(program, { email, clientReferenceId: '900000000001' });
  expect(sale).toMatchObject({
    referralId: referral.id,
    affiliateId: program.affiliate.id,
    attribution: expect.objectContaining({ method: 'EMAIL' }),
  });
});

test("an invoice attributed through the customer's email says EMAIL, as POST /sales by email does", async () => {
  const program = await connectedProgram();
  const { customer, email, referral } = await referredCustomer(program);
  await program.send(stripeEvent('invoice.paid', invoice({ customer, email, amountPaid: 2000 })));
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({
    referralId: referral.id,
    attribution: expect.objectContaining({ method: 'EMAIL', affiliateId: program.affiliate.id }),
  });
});

test("the click a checkout names wins over an earlier referral of the customer's email by another affiliate", async () => {
  const program = await connectedProgram();
  const { email } = await referredCustomer(program);
  const grace = await secondAffiliate(program);
  const click = await recordClick(program, { slug: grace.slug });
  const sale = await saleOfCheckout(program, { email, clientReferenceId: String(click.clickId) });
  expect(sale).toMatchObject({
    affiliateId: grace.id,
    referralId: null,
    attribution: expect.objectContaining({ method: 'CLICK', clickId: click.clickId, affiliateId: grace.id }),
  });
});

test('a paid one-off Checkout payment of a guest is a sale of its total in its currency, and a refund of its payment intent reverses it', async () => {
  const program = await connectedProgram();
  const click = await recordClick(program);
  const paymentIntent = stripeId('pi');
  const session = checkoutSession({
    customer: null,
    email: `guest-${randomUUID().slice(0, 8)}@example.com`,
    mode: 'payment',
    amountTotal: 5000,
    currency: 'jpy',
    paymentIntent,
    metadata: { affiliate_click_id: String(click.clickId) },
  });
  expect((await program.send(stripeEvent('checkout.session.completed', session))).body).toMatchObject({ outcome: 'processed' });
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({
    externalId: paymentIntent,
    totalEarned: 5000,
    currency: 'JPY',
    commissionEarned: 1000,
    paymentTrigger: 'one_time',
    affiliateId: program.affiliate.id,
    customerId: null,
  });
  await eventually(() => expect(deliveries('sale.created', sale.id)).toHaveLength(1), 20_000);
  const refunded = { ...charge({ paymentIntent, customer: '', amount: 5000, amountRefunded: 5000 }), currency: 'jpy', customer: null };
  expect((await program.send(stripeEvent('charge.refunded', refunded))).body).toMatchObject({ outcome: 'processed' });
  expect(await sales(program.api)).toEqual([]);
});

test('partial refunds delivered in reverse order end at the larger refund: an earlier, smaller one arriving late changes nothing', async () => {
  const program = await connectedProgram();
  const { sale, customer, paymentIntent } = await paidSale(program);
  const chargeId = stripeId('ch');
  const chargeOf = (amountRefunded: number) => ({ ...charge({ paymentIntent, customer, amount: 10000, amountRefunded }), id: chargeId });
  expect((await program.send(stripeEvent('charge.refunded', chargeOf(5000)))).body).toMatchObject({ outcome: 'processed' });
  expect((await program.send(stripeEvent('charge.refunded', chargeOf(2500)))).body).toMatchObject({ outcome: 'ignored' });
  expect(await ok(program.api.get(`/sales?id=${sale.id}`))).toMatchObject({ totalEarned: 50, commissionEarned: 10 });
});
