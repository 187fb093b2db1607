import { eventually } from '@affiliate/platform/testing';
import { System, typedClient } from '../harness';

let system: System;

beforeAll(async () => {
  system = await System.start();
}, 180_000);
afterAll(async () => {
  await system?.stop();
});

test("through the gateway: a visitor's repeat click counts once, a referral by visitorId is attributed VISITOR, and its sale REFERRAL with the click", async () => {
  const { key } = await system.createProgram();
  const client = typedClient(system.gatewayUrl, key);
  const affiliate = await ok(
    client.POST('/api/v1/affiliates', { body: { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', affiliateLink: 'ada' } }),
  );

  const visitor = {
    link: 'ada',
    visitorId: 'visitor-7f3a9c',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  };
  const first = await ok(client.POST('/api/v1/clicks', { body: visitor }));
  const repeat = await ok(client.POST('/api/v1/clicks', { body: visitor }));
  expect(first).toMatchObject({ counted: true, reason: null });
  expect(repeat).toMatchObject({ clickId: first.clickId, counted: false, reason: 'DUPLICATE' });

  const referral = await ok(client.POST('/api/v1/referrals', { body: { visitorId: visitor.visitorId, email: 'customer@example.com' } }));
  expect(referral).toMatchObject({ affiliateId: affiliate.id, clickId: first.clickId });
  expect(referral.attribution).toMatchObject({ method: 'VISITOR', clickId: first.clickId, affiliateId: affiliate.id });

  const sale = await ok(client.POST('/api/v1/sales', { body: { referralId: referral.id, totalEarned: 49.99 } }));
  expect(sale.attribution).toMatchObject({
    method: 'REFERRAL',
    clickId: first.clickId,
    clickedAt: referral.attribution?.clickedAt,
    affiliateId: affiliate.id,
  });

  await eventually(async () => {
    const links = await ok(client.GET('/api/v1/links', { params: { query: { link: 'ada' } } }));
    expect(links[0]).toMatchObject({ clicks: 1, referrals: 1, sales: 1 });
  }, 20_000);
});

test("a program's own PUT /api/v1/program reaches click intake and attribution: deduplication off, a 1-day window", async () => {
  const { key } = await system.createProgram();
  const client = typedClient(system.gatewayUrl, key);
  await ok(
    client.POST('/api/v1/affiliates', {
      body: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', affiliateLink: 'grace' },
    }),
  );
  const changed = await ok(client.PUT('/api/v1/program', { body: { clickDedupSeconds: 0, attributionWindowDays: 1 } }));
  expect(changed).toMatchObject({ clickDedupSeconds: 0, attributionWindowDays: 1 });
  // The setting travels as program.updated to the affiliate service: repeat clicks of one visitor count once it has arrived.
  const visitor = { link: 'grace', visitorId: 'visitor-dedup-off' };
  await eventually(async () => expect(await ok(client.POST('/api/v1/clicks', { body: visitor }))).toMatchObject({ counted: true }), 20_000);
  expect(await ok(client.POST('/api/v1/clicks', { body: visitor }))).toMatchObject({ counted: true, reason: null });
  // An imported click two days old is outside the 1-day window: a referral by it is refused, naming the window.
  const old = await ok(
    client.POST('/api/v1/clicks', { body: { link: 'grace', occurredAt: new Date(Date.now() - 2 * 86_400_000).toISOString() } }),
  );
  const refused = await client.POST('/api/v1/referrals', { body: { clickId: old.clickId ?? undefined, email: 'late@example.com' } });
  expect(refused.response.status).toBe(400);
  expect(JSON.stringify(refused.error)).toMatch(/attribution window of 1 day/);
});

test('through the gateway: a checkout passes the visitor id to POST /sales, and the sale goes to the click the model picks (VISITOR); an unknown visitor is a 400', async () => {
  const { key } = await system.createProgram();
  const client = typedClient(system.gatewayUrl, key);
  const affiliate = await ok(
    client.POST('/api/v1/affiliates', {
      body: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', affiliateLink: 'grace' },
    }),
  );
  const click = await ok(client.POST('/api/v1/clicks', { body: { link: 'grace', visitorId: 'visitor-checkout-1' } }));

  const sale = await ok(
    client.POST('/api/v1/sales', { body: { visitorId: 'visitor-checkout-1', totalEarned: 30, externalId: 'pi_checkout_1' } }),
  );
  expect(sale).toMatchObject({ affiliateId: affiliate.id, referralId: null, externalId: 'pi_checkout_1' });
  expect(sale.attribution).toMatchObject({ method: 'VISITOR', clickId: click.clickId, affiliateId: affiliate.id });

  const byClick = await ok(client.POST('/api/v1/sales', { body: { clickId: click.clickId!, totalEarned: 20 } }));
  expect(byClick.attribution).toMatchObject({ method: 'CLICK', clickId: click.clickId, affiliateId: affiliate.id });

  const unknown = await client.POST('/api/v1/sales', { body: { visitorId: 'visitor-never-seen-9', totalEarned: 30 } });
  expect(unknown.response.status).toBe(400);
  expect(unknown.error).toMatchObject({ error: expect.stringMatching(/^visitorId: /) });
  expect(await ok(client.GET('/api/v1/sales', {}))).toHaveLength(2);
});

async function ok<Data>(pending: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const { data, error, response } = await pending;
  if (response.status !== 200 || data === undefined) throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(error)}`);
  return data;
}
