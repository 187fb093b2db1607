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

/** A Stripe event envelope as webhook endpoints receive it (a snapshot event). */
function stripeEvent(type: string, object: AnyObject): AnyObject {
  return {
    id: stripeId('evt'),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: secondsAgo(),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: stripeId('req'), idempotency_key: randomUUID() },
    type,
  };
}

function checkoutSession(fields: { customer: string; email: string; clientReferenceId?: string | null; metadata?: Record<string, string> }): AnyObject {
  return {
    id: stripeId('cs_test'),
    object: 'checkout.session',
    amount_subtotal: 10000,
    amount_total: 10000,
    cancel_url: 'https://shop.example/cancel',
    client_reference_id: fields.clientReferenceId ?? null,
    created: secondsAgo(120),
    currency: 'usd',
    customer: fields.customer,
    customer_creation: 'always',
    customer_details: { address: null, email: fields.email, name: 'Ada Lovelace', phone: null, tax_exempt: 'none', tax_ids: [] },
    customer_email: null,
    expires_at: secondsAgo(-86_400),
    livemode: false,
    metadata: fields.metadata ?? {},
    mode: 'subscription',
    payment_status: 'paid',
    status: 'complete',
    subscription: stripeId('sub'),
    success_url: 'https://shop.example/thanks',
    url: null,
  };
}

type InvoiceFields = {
  customer: string;
  email: string;
  amountPaid: number;
  currency?: string;
  billingReason?: string;
  paymentIntent?: string;
  discounts?: AnyObject[];
};

/** An invoice of the current API version: the payment is in `payments`, the discounts in `discounts`. */
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
    parent: { type: 'subscription_details', quote_details: null, subscription_details: { metadata: {}, subscription: stripeId('sub') } },
    payments: {
      object: 'list',
      data: [
        {
          id: stripeId('inpay'),
          object: 'invoice_payment',
          amount_paid: fields.amountPaid,
          amount_requested: fields.amountPaid,
          created: paidAt,
          currency,
          invoice: id,
          is_default: true,
          livemode: false,
          payment: { type: 'payment_intent', payment_intent: fields.paymentIntent ?? stripeId('pi') },
          status: 'paid',
          status_transitions: { canceled_at: null, paid_at: paidAt },
        },
      ],
      has_more: false,
      url: '/v1/invoice_payments',
    },
    status: 'paid',
    status_transitions: { finalized_at: paidAt - 5, marked_uncollectible_at: null, paid_at: paidAt, voided_at: null },
    subtotal: fields.amountPaid,
    total: fields.amountPaid,
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
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' };
  if (signWith !== null) headers['stripe-signature'] = Stripe.webhooks.generateTestHeaderString({ payload, secret: signWith });
  const response = await fetch(`${world.system.gatewayUrl}/integrations/stripe/${programId}/webhooks`, { method: 'POST', headers, body: payload });
  return { status: response.status, body: (await response.json()) as AnyObject };
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

type Connected = { programId: string; key: string; api: Api; secret: string; affiliate: AnyObject; send: (event: AnyObject) => Promise<Answer> };

/** A program connected to Stripe, paying 20 % on every payment, whose sale.* webhooks reach the subscriber. */
async function connectedProgram(): Promise<Connected> {
  const { programId, key, api } = await world.system.createProgram();
  const secret = newSecret();
  await ok(api.put('/integrations/stripe', { webhookSecret: secret }));
  await ok(api.post('/webhook-endpoints', { url: world.hooks, eventTypes: ['sale.created', 'sale.updated', 'sale.deleted'] }));
  await ok(api.post('/commission-plans', { name: 'Stripe', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 0, isDefault: true }));
  const slug = `ada-${randomUUID().slice(0, 8)}`;
  const affiliate = await ok(api.post('/affiliates', { firstName: 'Ada', lastName: 'Lovelace', email: `${slug}@example.com`, affiliateLink: slug }));
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
async function recordClick(program: Connected): Promise<{ clickId: number }> {
  const response = await fetch(`${world.system.gatewayUrl}/api/v1/clicks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${program.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ link: program.affiliate.slug }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { clickId: number };
}

const deliveries = (type: string, saleId: string) => world.subscriber.events(type).filter((delivery) => delivery.body.data.id === saleId).map((delivery) => delivery.body.data);
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
    expect(answer.body).toEqual({ configured: true, webhookSecretLast4: secret.slice(-4), webhookUrl: `/integrations/stripe/${programId}/webhooks` });
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
  const checkout = await program.send(stripeEvent('checkout.session.completed', checkoutSession({ customer, email, clientReferenceId: String(click.clickId) })));
  expect(checkout).toMatchObject({ status: 200, body: { received: true, outcome: 'processed' } });
  const [referral] = await ok(program.api.get(`/referrals?email=${encodeURIComponent(email)}`));
  expect(referral).toMatchObject({ affiliateId: program.affiliate.id, clickId: click.clickId, name: 'Ada Lovelace' });

  // The invoice names another email: the customer link, not the email, attributes it.
  const paid = invoice({ customer, email: `billing-${randomUUID().slice(0, 8)}@example.com`, amountPaid: 10000 });
  expect((await program.send(stripeEvent('invoice.paid', paid))).body).toMatchObject({ outcome: 'processed' });
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({ referralId: referral.id, affiliateId: program.affiliate.id, externalId: paid.id, customerId: customer, totalEarned: 100, currency: 'USD', commissionEarned: 20 });
  expect(sale.paidAt).toBe(new Date(paid.status_transitions.paid_at * 1000).toISOString());
  await eventually(() => expect(deliveries('sale.created', sale.id)).toEqual([expect.objectContaining({ referral: expect.objectContaining({ id: referral.id }), affiliate: expect.objectContaining({ id: program.affiliate.id }) })]), 20_000);
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
  await eventually(() => expect(deliveries('sale.created', byInvoice[renewal.id].id)).toEqual([expect.objectContaining({ paymentTrigger: 'subscription_renewed' })]), 20_000);
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
  const answer = await program.send(stripeEvent('customer.created', { id: customer, object: 'customer', email, created: secondsAgo(), livemode: false, metadata: {} }));
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

test('a promotion code on the invoice attributes the sale to the affiliate of the program code with that externalId', async () => {
  const program = await connectedProgram();
  const promotionCodeId = stripeId('promo');
  const coupon = await ok(program.api.post('/coupons', { name: 'Launch', percentOff: 10 }));
  const code = await ok(program.api.post('/promotional-codes', { couponId: coupon.id, code: 'LAUNCH10', affiliateId: program.affiliate.id, externalId: promotionCodeId }));
  const discount = { id: stripeId('di'), object: 'discount', coupon: null, customer: null, end: null, invoice: null, invoice_item: null, promotion_code: promotionCodeId, start: secondsAgo(60), subscription: null };
  const customer = stripeId('cus');
  await program.send(stripeEvent('invoice.paid', invoice({ customer, email: `nobody-${randomUUID().slice(0, 8)}@example.com`, amountPaid: 9000, discounts: [discount] })));
  const [sale] = await sales(program.api);
  expect(sale).toMatchObject({ promotionalCodeId: code.id, promoCode: 'LAUNCH10', affiliateId: program.affiliate.id, referralId: null, customerId: customer, totalEarned: 90 });
});

test('an invoice with neither a referred customer nor a code of the program answers 200 and records nothing', async () => {
  const program = await connectedProgram();
  const answer = await program.send(stripeEvent('invoice.paid', invoice({ customer: stripeId('cus'), email: `stranger-${randomUUID().slice(0, 8)}@example.com`, amountPaid: 9000 })));
  expect(answer).toMatchObject({ status: 200, body: { outcome: 'ignored' } });
  expect(await sales(program.api)).toEqual([]);
});

/** A sale of 100 USD paid through `paymentIntent`, commission 20. */
async function paidSale(program: Connected): Promise<{ sale: AnyObject; customer: string; paymentIntent: string }> {
  const { customer, email } = await referredCustomer(program);
  const paymentIntent = stripeId('pi');
  await program.send(stripeEvent('invoice.paid', invoice({ customer, email, amountPaid: 10000, paymentIntent })));
  const [sale] = await sales(program.api);
  return { sale, customer, paymentIntent };
}

test('a full refund (charge.refunded) reverses the sale and sends sale.deleted', async () => {
  const program = await connectedProgram();
  const { sale, customer, paymentIntent } = await paidSale(program);
  const answer = await program.send(stripeEvent('charge.refunded', charge({ paymentIntent, customer, amount: 10000, amountRefunded: 10000 })));
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

test('a dispute (charge.dispute.created) reverses the sale and sends sale.deleted', async () => {
  const program = await connectedProgram();
  const { sale, paymentIntent } = await paidSale(program);
  const answer = await program.send(stripeEvent('charge.dispute.created', dispute({ charge: stripeId('ch'), paymentIntent, amount: 10000 })));
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
  await eventually(async () => {
    const answer = await program.send(event);
    retries.push(answer.status);
    expect(answer.body).toMatchObject({ outcome: 'processed' });
  }, 30_000, 500);
  expect(retries).not.toContain(409);
  expect(await sales(program.api)).toHaveLength(1);
});
