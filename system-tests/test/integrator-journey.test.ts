import { payloadSchemaOf, PUBLIC_EVENT_TYPES, type PublicEventType } from '@affiliate/contracts';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { eventually } from '@affiliate/platform/testing';
import { Subscriber, System, typedClient, type ApiResponse } from '../harness';

let system: System;
const subscriber = new Subscriber();

beforeAll(async () => {
  system = await System.start();
}, 180_000);
afterAll(async () => {
  await subscriber.stop();
  await system?.stop();
});

test('the integrator journey, with the typed client: affiliate → link → click → referral → coupon → code → sales → reversal, and every public event type, signed and fitting its schema', async () => {
  const { key } = await system.createProgram({
    destinationUrls: [{ url: 'https://shop.example.com/?lang=en', params: { utm_source: 'affiliate' } }],
  });
  const client = typedClient(system.gatewayUrl, key);
  const endpoint = await ok(client.POST('/api/v1/webhook-endpoints', { body: { url: await subscriber.start(), eventTypes: ['*'] } }));
  // Two verifiers a subscriber would use: the Standard Webhooks reference library and Svix's SDK.
  const verifier = new Webhook(endpoint.secret as string);
  const svixVerifier = new SvixWebhook(endpoint.secret as string);

  const affiliate = await ok(
    client.POST('/api/v1/affiliates', { body: { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com' } }),
  );
  expect(affiliate.affiliateLinks).toHaveLength(1);
  const link = await ok(client.POST('/api/v1/links', { body: { link: 'ada-spring', affiliateId: affiliate.id } }));
  expect(link.fullURLs).toEqual([
    { baseUrl: 'https://shop.example.com/?lang=en', fullUrl: 'https://shop.example.com/?lang=en&ref=ada-spring&utm_source=affiliate' },
  ]);

  const click = await ok(client.POST('/api/v1/clicks', { body: { link: 'ada-spring' } }));
  expect(click).toMatchObject({ counted: true, reason: null });
  const resolved = one(await ok(client.GET('/api/v1/affiliates', { params: { query: { id: String(click.clickId) } } })));
  expect(resolved.id).toBe(affiliate.id);
  const referral = await ok(
    client.POST('/api/v1/referrals', { body: { clickId: click.clickId ?? undefined, email: 'customer@example.com', name: 'Cus Tomer' } }),
  );
  expect(referral.affiliateId).toBe(affiliate.id);

  const coupon = await ok(client.POST('/api/v1/coupons', { body: { name: 'Spring', percentOff: 20, maxRedemptions: 5 } }));
  const code = await ok(
    client.POST('/api/v1/promotional-codes', { body: { couponId: coupon.id, code: 'SPRING20', affiliateId: affiliate.id } }),
  );
  expect(code.coupon.id).toBe(coupon.id);

  const saleByCode = await ok(client.POST('/api/v1/sales', { body: { promoCode: 'spring20', totalEarned: 100, externalId: 'pay_1' } }));
  expect(saleByCode.affiliateId).toBe(affiliate.id);
  const saleByReferral = await ok(client.POST('/api/v1/sales', { body: { referralId: referral.id, totalEarned: 49.99 } }));
  const afterCode = one(await ok(client.GET('/api/v1/promotional-codes', { params: { query: { id: code.id } } })));
  expect(afterCode.timesRedeemed).toBe(1);
  expect(afterCode.coupon.timesRedeemed).toBe(1);

  await ok(client.DELETE('/api/v1/sales', { body: { saleId: saleByReferral.id } }));
  await ok(client.PUT('/api/v1/sales', { body: { saleId: saleByCode.id, payoutCreated: true, payoutId: 'po_1' } }));
  await ok(client.PUT('/api/v1/referrals', { body: { referralId: referral.id, plan: 'pro' } }));
  await ok(client.PUT('/api/v1/coupons', { body: { couponId: coupon.id, name: 'Spring sale' } }));
  await ok(client.PUT('/api/v1/promotional-codes', { body: { promotionalCodeId: code.id, active: false } }));

  await eventually(async () => {
    const links = await ok(client.GET('/api/v1/links', { params: { query: { link: 'ada-spring' } } }));
    expect(links[0]).toMatchObject({ clicks: 1, referrals: 1, sales: 0, totalRevenue: 0 });
  }, 20_000);

  // The deletions last, so that every family also reaches its *.deleted event.
  await ok(client.DELETE('/api/v1/referrals', { body: { referralId: referral.id } }));
  await ok(client.DELETE('/api/v1/promotional-codes', { body: { promotionalCodeId: code.id } }));
  await ok(client.DELETE('/api/v1/coupons', { body: { couponId: coupon.id } }));
  await ok(client.DELETE('/api/v1/affiliates', { body: { affiliateId: affiliate.id } }));
  await eventually(() => {
    const types = new Set(subscriber.deliveries.map((delivery) => delivery.body.event));
    expect([...PUBLIC_EVENT_TYPES].filter((type) => !types.has(type))).toEqual([]);
    expect(subscriber.events('sale.created')).toHaveLength(2);
  }, 30_000);

  for (const delivery of subscriber.deliveries) {
    expect(() => verifier.verify(delivery.rawBody, delivery.headers as Record<string, string>)).not.toThrow();
    expect(() => svixVerifier.verify(delivery.rawBody, delivery.headers as Record<string, string>)).not.toThrow();
    expect(delivery.headers['webhook-id']).toBe(delivery.body.id);
    // Every producer of a public event, held to its type's schema in the catalogue.
    const fits = payloadSchemaOf(delivery.body.event as PublicEventType).safeParse(delivery.body);
    const problems = fits.success ? [] : fits.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    expect({ event: delivery.body.event, problems }).toEqual({ event: delivery.body.event, problems: [] });
  }
  // Payload rules 1–4 of the spec.
  const created = subscriber.events('affiliate.created')[0]?.body.data;
  expect(created).toMatchObject({ id: affiliate.id, commissionPlan: null, commissionTier: null, signupAnswers: [], promotionalCodes: [] });
  expect(created?.affiliateLinks).toHaveLength(1);
  const sale = subscriber.events('sale.created').find((delivery) => delivery.body.data.id === saleByReferral.id)?.body.data;
  expect(sale).toMatchObject({ affiliate: { id: affiliate.id }, referral: { id: referral.id }, paymentTrigger: expect.any(String) });
  expect(sale?.commissionEarned).toEqual(expect.any(Number));
  expect(subscriber.events('promocode.created')[0]?.body.data.coupon.id).toBe(coupon.id);
  expect(subscriber.events('coupon.created')[0]?.body.data.promotionalCodes).toEqual([]);
  for (const type of PUBLIC_EVENT_TYPES.filter((candidate) => candidate.endsWith('.deleted'))) {
    expect({ type, keys: Object.keys(subscriber.events(type)[0]?.body.data ?? {}) }).toEqual({ type, keys: ['id'] });
  }
  expect(subscriber.events('sale.deleted')[0]?.body.data).toEqual({ id: saleByReferral.id });
  expect(subscriber.events('sale.updated')[0]?.body.data.commissions[0]).toMatchObject({ payoutCreated: true, payoutId: 'po_1' });
  const updated = subscriber.events('affiliate.updated')[0]?.body.data;
  expect(updated).not.toHaveProperty('previous_attributes');
});

/** The documented success body of a typed-client call, or the test fails with the error body. */
async function ok<Data>(pending: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const { data, error, response } = await pending;
  if (response.status !== 200 || data === undefined) throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(error)}`);
  return data;
}

/** Lookups by id answer one object; the document also allows a list (and null for affiliates). */
function one<Item>(found: Item | Item[] | null): Item {
  if (found === null || Array.isArray(found)) throw new Error(`expected one object, got ${JSON.stringify(found)}`);
  return found;
}

async function expectOk(pending: Promise<ApiResponse>) {
  const response = await pending;
  if (response.status !== 200) throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

test('tenant isolation: a key of program B can never read or change anything of program A, on any route', async () => {
  const a = await system.createProgram();
  const b = await system.createProgram();
  const affiliate = await expectOk(
    a.api.post('/affiliates', { firstName: 'Iso', lastName: 'Lated', email: 'iso@example.com', affiliateLink: 'iso-a' }),
  );
  const coupon = await expectOk(a.api.post('/coupons', { name: 'A only', percentOff: 10 }));
  const code = await expectOk(a.api.post('/promotional-codes', { couponId: coupon.id, code: 'AONLY', affiliateId: affiliate.id }));
  const referral = await expectOk(a.api.post('/referrals', { affiliateId: affiliate.id, email: 'buyer@example.com' }));
  const sale = await expectOk(a.api.post('/sales', { referralId: referral.id, totalEarned: 10 }));
  const endpoint = await expectOk(a.api.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['sale.created'] }));

  // Reads by id answer as if the object did not exist; lists are empty.
  expect((await b.api.get(`/coupons?id=${coupon.id}`)).status).toBe(404);
  expect((await b.api.get(`/promotional-codes?code=AONLY`)).status).toBe(404);
  expect((await b.api.get(`/affiliates?id=${affiliate.id}`)).body).toBeNull();
  expect((await b.api.get(`/affiliates?id=iso-a`)).body).toBeNull();
  expect((await b.api.get(`/links?affiliateId=${affiliate.id}`)).body).toEqual([]);
  expect((await b.api.get(`/referrals?id=${referral.id}`)).status).toBe(404);
  expect((await b.api.get(`/sales?id=${sale.id}`)).status).toBe(404);
  for (const list of ['/coupons', '/affiliates', '/referrals', '/sales', '/webhook-endpoints']) {
    expect({ list, body: (await b.api.get(list)).body }).toEqual({ list, body: [] });
  }

  // Writes aimed at A's objects change nothing.
  const attempts: [string, string, unknown][] = [
    ['PUT', '/coupons', { couponId: coupon.id, name: 'stolen' }],
    ['DELETE', '/coupons', { couponId: coupon.id }],
    ['PUT', '/promotional-codes', { promotionalCodeId: code.id, active: false }],
    ['DELETE', '/promotional-codes', { promotionalCodeId: code.id }],
    ['PUT', '/affiliates', { affiliateId: affiliate.id, firstName: 'stolen' }],
    ['DELETE', '/affiliates', { affiliateId: affiliate.id }],
    ['POST', '/links', { link: 'hijack', affiliateId: affiliate.id }],
    ['PUT', '/links', { link: 'iso-a', newLink: 'hijacked' }],
    ['DELETE', '/links', { link: 'iso-a' }],
    ['POST', '/clicks', { link: 'iso-a' }],
    ['POST', '/referrals', { affiliateId: affiliate.id, email: 'x@example.com' }],
    ['PUT', '/referrals', { referralId: referral.id, plan: 'stolen' }],
    ['DELETE', '/referrals', { referralId: referral.id }],
    ['POST', '/sales', { promoCode: 'AONLY', totalEarned: 10 }],
    ['POST', '/sales', { referralId: referral.id, totalEarned: 10 }],
    ['PUT', '/sales', { saleId: sale.id, payoutCreated: true, payoutId: 'po_1' }],
    ['DELETE', '/sales', { saleId: sale.id }],
    ['PUT', '/webhook-endpoints', { webhookEndpointId: endpoint.id, active: false }],
    ['DELETE', '/webhook-endpoints', { webhookEndpointId: endpoint.id }],
  ];
  const answered: string[] = [];
  for (const [method, path, body] of attempts) {
    const response = await b.api.request(method, path, body);
    if (response.status !== 400 && response.status !== 404) answered.push(`${method} ${path} → ${response.status}`);
  }
  expect(answered).toEqual([]);

  expect((await a.api.get(`/coupons?id=${coupon.id}`)).body).toMatchObject({ name: 'A only', timesRedeemed: 0 });
  expect((await a.api.get(`/promotional-codes?id=${code.id}`)).body).toMatchObject({ active: true, timesRedeemed: 0 });
  expect((await a.api.get(`/affiliates?id=${affiliate.id}`)).body).toMatchObject({ firstName: 'Iso' });
  expect((await a.api.get(`/links?affiliateId=${affiliate.id}`)).body.map((link: { link: string }) => link.link)).toEqual(['iso-a']);
  expect((await a.api.get(`/referrals?id=${referral.id}`)).body).toMatchObject({ plan: null });
  expect((await a.api.get(`/sales?id=${sale.id}`)).body.commissions[0]).toMatchObject({ payoutCreated: false });
  expect((await a.api.get(`/webhook-endpoints?id=${endpoint.id}`)).body).toMatchObject({ active: true });
});
