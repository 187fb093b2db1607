import { randomUUID } from 'node:crypto';
import { eventually } from '@affiliate/platform/testing';
import { parse } from 'csv-parse/sync';
import { apiClient, okBody as ok, type Api } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * Fraud review through the gateway (issue 28): risk signals on referrals and sales, what each
 * program's riskActions do with them, held commissions and the review queue, and affiliate
 * statements. Each test has a program of its own.
 */
const world = systemWithSubscriber();

type Risk = { signals: { type: string; detail: string }[]; action: string };
const typesOf = (risk: Risk) => risk.signals.map((signal) => signal.type);

/**
 * A program with the risk settings given, a default plan paying 20 % with no hold (every
 * commission DUE at once), and the settings known to the services: a unique urlModifier is set
 * with them, and the affiliate service's links show it once program.created has arrived.
 */
async function program(
  settings: Record<string, unknown> = {},
): Promise<{ api: Api; key: string; programId: string; grace: { id: string; email: string } }> {
  const urlModifier = `m${randomUUID().slice(0, 8)}`;
  const created = await world.system.createProgram({ urlModifier, destinationUrls: [{ url: 'https://shop.example.com/' }], ...settings });
  const { api } = created;
  await ok(api.post('/webhook-endpoints', { url: world.hooks, eventTypes: ['sale.updated'] }));
  await ok(
    api.post('/commission-plans', {
      name: 'Review',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  const grace = await affiliate(api, 'grace');
  await eventually(async () => {
    const links = await ok(api.get(`/links?affiliateId=${grace.id}`));
    expect(links[0].fullURLs[0].fullUrl).toContain(`${urlModifier}=`);
  }, 30_000);
  return { ...created, grace };
}

async function affiliate(
  api: Api,
  name: string,
  email = `${name}-${randomUUID().slice(0, 8)}@example.com`,
): Promise<{ id: string; email: string }> {
  return ok(api.post('/affiliates', { firstName: name, lastName: 'Tester', email, affiliateLink: `${name}-${randomUUID().slice(0, 8)}` }));
}

const linkOf = async (api: Api, affiliateId: string): Promise<string> => (await ok(api.get(`/links?affiliateId=${affiliateId}`)))[0].link;

/** A sale of `total` through a new referral of the affiliate (its commission: 20 % of it). */
async function saleOf(api: Api, affiliateId: string, total: number, fields: Record<string, unknown> = {}) {
  const referral = await ok(api.post('/referrals', { affiliateId, email: `c-${randomUUID().slice(0, 8)}@example.com` }));
  return ok(api.post('/sales', { referralId: referral.id, totalEarned: total, ...fields }));
}

const saleById = (api: Api, saleId: string) => ok(api.get(`/sales?id=${saleId}`));
/** The sale's states its sale.updated webhooks carried, oldest revision first. */
const saleUpdates = (saleId: string) => world.subscriber.revisionsOf('sale.updated', saleId);

describe('risk signals', () => {
  test("SELF_REFERRAL: a customer with the affiliate's own email (other case, Gmail dots, a +tag) is flagged on the referral and its sale", async () => {
    const { api } = await program();
    const ada = await affiliate(api, 'ada', 'ada.byron@gmail.com');
    const referral = await ok(api.post('/referrals', { affiliateId: ada.id, email: 'Ada.Byron+shop@googlemail.com' }));
    expect(referral.risk).toEqual({
      signals: [{ type: 'SELF_REFERRAL', detail: expect.stringContaining('ada.byron@gmail.com') }],
      action: 'FLAG',
    });
    const sale = await ok(api.post('/sales', { referralId: referral.id, totalEarned: 10 }));
    expect(typesOf(sale.risk)).toEqual(['SELF_REFERRAL']);
    expect(typesOf((await ok(api.post('/referrals', { affiliateId: ada.id, email: 'ada.lovelace@gmail.com' }))).risk)).toEqual([]);
  });

  test('CUSTOMER_OF_ANOTHER_AFFILIATE: an email already referred by another affiliate (written otherwise), or a customerId already sold through another, is flagged', async () => {
    const { api, grace } = await program();
    const alan = await affiliate(api, 'alan');
    await ok(api.post('/referrals', { affiliateId: grace.id, email: 'sam@example.com', referredUserExternalId: 'user-1' }));
    const again = await ok(api.post('/referrals', { affiliateId: alan.id, email: 'Sam+promo@example.com' }));
    expect(again.risk).toEqual({
      signals: [{ type: 'CUSTOMER_OF_ANOTHER_AFFILIATE', detail: expect.stringContaining(grace.id) }],
      action: 'FLAG',
    });

    const first = await saleOf(api, grace.id, 10, { customerId: 'cus_77' });
    expect(typesOf(first.risk)).toEqual([]);
    expect(typesOf((await saleOf(api, grace.id, 10, { customerId: 'cus_77' })).risk)).toEqual([]);
    const other = await saleOf(api, alan.id, 10, { customerId: 'cus_77' });
    expect(other.risk.signals).toEqual([{ type: 'CUSTOMER_OF_ANOTHER_AFFILIATE', detail: expect.stringContaining(grace.id) }]);
  });

  test("CUSTOMER_OF_ANOTHER_AFFILIATE on a sale: a sale through affiliate B's promo code for a customer that affiliate A referred (by the referral's external id) carries the signal; a customer nobody referred does not", async () => {
    const { api, grace } = await program();
    const alan = await affiliate(api, 'alan');
    const customerId = `cus_${randomUUID().slice(0, 8)}`;
    const referred = await ok(
      api.post('/referrals', {
        affiliateId: grace.id,
        email: `dana.smith-${randomUUID().slice(0, 6)}@gmail.com`,
        referredUserExternalId: customerId,
      }),
    );
    const coupon = await ok(api.post('/coupons', { name: 'Ten off', percentOff: 10 }));
    const alanCode = await ok(
      api.post('/promotional-codes', { couponId: coupon.id, code: `ALAN${randomUUID().slice(0, 6)}`, affiliateId: alan.id }),
    );

    const throughB = await ok(api.post('/sales', { promoCode: alanCode.code, customerId, totalEarned: 10 }));
    expect(throughB.affiliateId).toBe(alan.id);
    expect(throughB.risk.signals).toEqual([{ type: 'CUSTOMER_OF_ANOTHER_AFFILIATE', detail: expect.stringContaining(grace.id) }]);
    expect(throughB.risk.signals[0].detail).toContain(`referral ${referred.id}`);
    expect(
      typesOf(
        (await ok(api.post('/sales', { promoCode: alanCode.code, customerId: `cus_${randomUUID().slice(0, 8)}`, totalEarned: 10 }))).risk,
      ),
    ).toEqual([]);
  });

  test("FAST_CONVERSION: a referral or sale sooner after its click than the program's minClickToConversionSeconds is flagged", async () => {
    const { api, grace } = await program({ minClickToConversionSeconds: 3600 });
    const click = await ok(api.post('/clicks', { link: await linkOf(api, grace.id) }));
    const referral = await ok(api.post('/referrals', { clickId: click.clickId, email: 'quick@example.com' }));
    expect(referral.risk.signals).toEqual([{ type: 'FAST_CONVERSION', detail: expect.stringContaining('minimum is 3600 s') }]);
    expect(typesOf((await ok(api.post('/sales', { clickId: click.clickId, totalEarned: 10 }))).risk)).toEqual(['FAST_CONVERSION']);
    const old = await ok(
      api.post('/clicks', { link: await linkOf(api, grace.id), occurredAt: new Date(Date.now() - 2 * 3_600_000).toISOString() }),
    );
    expect(typesOf((await ok(api.post('/referrals', { clickId: old.clickId, email: 'slow@example.com' }))).risk)).toEqual([]);
  });

  test('DISPOSABLE_EMAIL: a customer at a disposable email domain is flagged', async () => {
    const { api, grace } = await program();
    const referral = await ok(api.post('/referrals', { affiliateId: grace.id, email: 'someone@mailinator.com' }));
    expect(referral.risk).toEqual({
      signals: [{ type: 'DISPOSABLE_EMAIL', detail: 'mailinator.com is a disposable email domain' }],
      action: 'FLAG',
    });
    expect(typesOf((await ok(api.post('/sales', { email: 'someone@mailinator.com', totalEarned: 10 }))).risk)).toEqual([
      'DISPOSABLE_EMAIL',
    ]);
  });

  test("COOKIE_STUFFING: a visitor who clicked 3 affiliates' links within an hour is flagged on the referral and the sale by its click; 2 are not", async () => {
    const { api, grace } = await program();
    const others = [await affiliate(api, 'alan'), await affiliate(api, 'ada')];
    for (const id of [grace.id, others[0]!.id]) await ok(api.post('/clicks', { link: await linkOf(api, id), visitorId: 'visitor-two' }));
    expect(typesOf((await ok(api.post('/referrals', { visitorId: 'visitor-two', email: 'two@example.com' }))).risk)).toEqual([]);

    let last = { clickId: 0 };
    for (const id of [grace.id, ...others.map((other) => other.id)])
      last = await ok(api.post('/clicks', { link: await linkOf(api, id), visitorId: 'visitor-stuffed' }));
    const referral = await ok(api.post('/referrals', { visitorId: 'visitor-stuffed', email: 'stuffed@example.com' }));
    expect(referral.risk.signals).toEqual([
      { type: 'COOKIE_STUFFING', detail: 'the visitor clicked the links of 3 affiliates within an hour' },
    ]);
    expect(typesOf((await ok(api.post('/sales', { clickId: last.clickId, totalEarned: 10 }))).risk)).toEqual(['COOKIE_STUFFING']);
  });

  test("OVER_AUTO_APPROVAL_LIMIT: a commission above the program's maxAutoApprovedCommission is flagged; one at or below it is not", async () => {
    const { api, grace } = await program({ maxAutoApprovedCommission: 10 });
    const over = await saleOf(api, grace.id, 100);
    expect(over.risk).toEqual({
      signals: [{ type: 'OVER_AUTO_APPROVAL_LIMIT', detail: expect.stringContaining('20 USD') }],
      action: 'FLAG',
    });
    expect(typesOf((await saleOf(api, grace.id, 50)).risk)).toEqual([]);
  });

  test("OVER_AUTO_APPROVAL_LIMIT applies the limit in the program's reportingCurrency only: a JPY commission of 600 with a limit of 500 is not flagged when reportingCurrency is USD; a USD one is", async () => {
    const { api, grace } = await program({ maxAutoApprovedCommission: 500 });
    expect(await saleOf(api, grace.id, 3000, { currency: 'JPY' })).toMatchObject({
      commissionEarned: 600,
      currency: 'JPY',
      risk: { signals: [], action: 'NONE' },
    });
    expect((await saleOf(api, grace.id, 3000)).risk.signals).toEqual([
      { type: 'OVER_AUTO_APPROVAL_LIMIT', detail: "the commission of 600 USD is above the program's limit of 500 USD" },
    ]);
  });
});

describe('risk actions', () => {
  test('OFF: the signal is not looked for', async () => {
    const { api, grace } = await program({ riskActions: { DISPOSABLE_EMAIL: 'OFF' } });
    const referral = await ok(api.post('/referrals', { affiliateId: grace.id, email: 'someone@mailinator.com' }));
    expect(referral.risk).toEqual({ signals: [], action: 'NONE' });
  });

  test('FLAG, the default: the signal is recorded and the commission is as before (DUE, paid by the next payout)', async () => {
    const { api, grace } = await program({ maxAutoApprovedCommission: 1 });
    const sale = await saleOf(api, grace.id, 100);
    expect(sale.risk.action).toBe('FLAG');
    expect(sale.commissions[0]).toMatchObject({ status: 'DUE' });
    expect(sale.commissions[0].decisions).toBeUndefined();
    expect(await ok(api.post('/payouts', {}))).toEqual([expect.objectContaining({ amount: 20 })]);
  });

  test('HOLD: the commission is HELD by the risk rules and never paid, whatever its date', async () => {
    const { api, grace } = await program({ maxAutoApprovedCommission: 1, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
    const sale = await saleOf(api, grace.id, 100, { paidAt: new Date(Date.now() - 90 * 86_400_000).toISOString() });
    expect(sale.risk.action).toBe('HOLD');
    expect(sale.commissions[0]).toMatchObject({
      status: 'HELD',
      decisions: [{ action: 'HOLD', by: { kind: 'RISK_RULES', keyId: null, keyPrefix: null }, reason: 'OVER_AUTO_APPROVAL_LIMIT' }],
    });
    expect(await ok(api.post('/payouts', {}))).toEqual([]);
    expect((await saleById(api, sale.id)).commissions[0]).toMatchObject({ status: 'HELD', payoutCreated: false });
  });

  test('a partial refund of a HELD commission (PUT /sales) lowers the held amount; it stays HELD and its release pays only what is still owed', async () => {
    const { api, grace } = await program({ maxAutoApprovedCommission: 1, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
    const sale = await saleOf(api, grace.id, 100);
    const refunded = await ok(api.put('/sales', { saleId: sale.id, totalEarned: 60 }));
    expect(refunded.commissions[0]).toMatchObject({ status: 'HELD', amount: 12 });
    await ok(api.post('/commissions/release', { saleId: sale.id, commissionId: sale.commissions[0].id }));
    expect(await ok(api.post('/payouts', {}))).toEqual([expect.objectContaining({ amount: 12 })]);
  });

  test('VOID: the commission is VOID at once; the strongest action of several signals wins', async () => {
    const { api } = await program({
      maxAutoApprovedCommission: 1,
      riskActions: { SELF_REFERRAL: 'VOID', OVER_AUTO_APPROVAL_LIMIT: 'HOLD' },
    });
    const ada = await affiliate(api, 'ada', 'ada@example.com');
    const referral = await ok(api.post('/referrals', { affiliateId: ada.id, email: 'ADA@example.com' }));
    const sale = await ok(api.post('/sales', { referralId: referral.id, totalEarned: 100 }));
    expect(sale.risk).toMatchObject({ action: 'VOID' });
    expect(typesOf(sale.risk).sort()).toEqual(['OVER_AUTO_APPROVAL_LIMIT', 'SELF_REFERRAL']);
    expect(sale.commissions[0]).toMatchObject({
      status: 'VOID',
      decisions: [{ action: 'VOID', by: { kind: 'RISK_RULES' }, reason: 'SELF_REFERRAL' }],
    });
    expect(await ok(api.post('/payouts', {}))).toEqual([]);
  });
});

test("the review queue through the gateway: a program lists its HELD commissions with their signals, releases or voids them with who and why, each change reaches subscribers; another program's key neither sees nor decides them", async () => {
  const holding = { maxAutoApprovedCommission: 1, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } };
  const a = await program(holding);
  const b = await program(holding);
  const [kept, dropped] = [await saleOf(a.api, a.grace.id, 100), await saleOf(a.api, a.grace.id, 50)];
  const theirs = await saleOf(b.api, b.grace.id, 100);

  const queue = await ok(a.api.get('/commissions?status=HELD'));
  expect(queue.map((item: { saleId: string }) => item.saleId).sort()).toEqual([kept.id, dropped.id].sort());
  expect(queue[0]).toMatchObject({ status: 'HELD', risk: { action: 'HOLD', signals: [{ type: 'OVER_AUTO_APPROVAL_LIMIT' }] } });
  expect(await ok(a.api.get(`/commissions?status=HELD&affiliateId=${b.grace.id}`))).toEqual([]);
  const paged = await a.api.get('/commissions?status=HELD&limit=1');
  expect(paged.body).toHaveLength(1);
  expect(paged.headers.get('link')).toContain('startingAfter=');

  // Program A's key cannot reach program B's commission: 404, and it stays HELD.
  const foreign = await a.api.post('/commissions/release', { saleId: theirs.id, commissionId: theirs.commissions[0].id });
  expect(foreign.status).toBe(404);
  expect((await saleById(b.api, theirs.id)).commissions[0].status).toBe('HELD');
  const foreignVoid = await a.api.post('/commissions/void', {
    saleId: theirs.id,
    commissionId: theirs.commissions[0].id,
    reason: 'not mine to void',
  });
  expect(foreignVoid.status).toBe(404);
  expect((await saleById(b.api, theirs.id)).commissions[0]).toMatchObject({
    status: 'HELD',
    decisions: [expect.objectContaining({ action: 'HOLD' })],
  });
  // Nor its affiliate's money: A's key asking for the statement of B's affiliate gets an empty one, while B's own key sees the entries.
  const statementPath = `/affiliates/statement?affiliateId=${b.grace.id}&currency=USD&from=${new Date(Date.now() - 86_400_000).toISOString()}`;
  expect((await ok(b.api.get(statementPath))).entries.map((entry: { type: string }) => entry.type)).toEqual(['EARNED', 'HELD']);
  expect(await ok(a.api.get(statementPath))).toMatchObject({ openingBalance: 0, closingBalance: 0, entries: [] });

  const released = await ok(
    a.api.post('/commissions/release', { saleId: kept.id, commissionId: kept.commissions[0].id, note: 'customer verified by phone' }),
  );
  expect(released.commissions[0]).toMatchObject({ status: 'DUE' });
  const release = released.commissions[0].decisions[1];
  expect(release).toMatchObject({
    action: 'RELEASE',
    reason: 'customer verified by phone',
    by: { kind: 'API_KEY', keyId: expect.any(String) },
  });
  expect(a.key.startsWith(release.by.keyPrefix)).toBe(true);
  const voided = await ok(
    a.api.post('/commissions/void', {
      saleId: dropped.id,
      commissionId: dropped.commissions[0].id,
      reason: 'same card as a refunded order',
    }),
  );
  expect(voided.commissions[0]).toMatchObject({ status: 'VOID' });
  expect(voided.commissions[0].decisions[1]).toMatchObject({
    action: 'VOID',
    reason: 'same card as a refunded order',
    by: { kind: 'API_KEY' },
  });

  // A decision twice, or on a voided commission, is a clear 400 that changes nothing.
  const twice = await a.api.post('/commissions/release', { saleId: kept.id, commissionId: kept.commissions[0].id });
  expect(twice.status).toBe(400);
  expect(twice.body.error).toMatch(/only a HELD commission can be released/);
  expect((await a.api.post('/commissions/release', { saleId: dropped.id, commissionId: dropped.commissions[0].id })).status).toBe(400);
  expect((await a.api.post('/commissions/void', { saleId: dropped.id, commissionId: dropped.commissions[0].id })).status).toBe(400);

  await eventually(() => {
    expect(saleUpdates(kept.id).at(-1)?.commissions[0]).toMatchObject({
      status: 'DUE',
      decisions: [{ action: 'HOLD' }, { action: 'RELEASE' }],
    });
    expect(saleUpdates(dropped.id).at(-1)?.commissions[0]).toMatchObject({ status: 'VOID' });
  }, 20_000);

  const [payout, ...more] = await ok(a.api.post('/payouts', {}));
  expect(more).toEqual([]);
  expect(payout.commissions).toEqual([expect.objectContaining({ saleId: kept.id, amount: 20 })]);
  expect(await ok(a.api.get('/commissions?status=HELD'))).toEqual([]);
  expect(await ok(b.api.get('/commissions?status=HELD'))).toEqual([expect.objectContaining({ saleId: theirs.id })]);
});

test("the review queue's next link still works once the commission it starts after was released: it answers the next held one", async () => {
  const { api, grace } = await program({ maxAutoApprovedCommission: 1, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
  const older = await saleOf(api, grace.id, 100);
  const newer = await saleOf(api, grace.id, 50);
  const first = await api.get('/commissions?status=HELD&limit=1');
  expect(first.body).toEqual([expect.objectContaining({ saleId: newer.id })]);
  const next = /<[^>]*(\/commissions\?[^>]*)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
  expect(next).toContain(`startingAfter=${newer.id}`);
  await ok(api.post('/commissions/release', { saleId: newer.id, commissionId: newer.commissions[0].id }));
  expect(await ok(api.get(next!))).toEqual([expect.objectContaining({ saleId: older.id, status: 'HELD' })]);
});

describe('GET /commissions by status: each page holds matching commissions (a page is never empty while a later one has some)', () => {
  type Listed = { saleId: string; status: string; amount: number };
  let api: Api;
  const sales: Record<string, string> = {};
  const listed = async (status: string, limit: number): Promise<{ items: Listed[]; next: boolean }> => {
    const response = await api.get(`/commissions?status=${status}&limit=${limit}`);
    expect(response.status).toBe(200);
    return { items: response.body as Listed[], next: (response.headers.get('link') ?? '').includes('rel="next"') };
  };

  // One program with a commission of every status, the oldest first, so that a newest-first page of one sale finds them in turn:
  // PAID (paid by a payout run), PENDING (a plan holding 30 days), HELD (over the limit), VOID (voided), VOID by reversing its sale, DUE.
  beforeAll(async () => {
    const made = await program({ maxAutoApprovedCommission: 50, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
    api = made.api;
    const { grace } = made;
    sales.PAID = (await saleOf(api, grace.id, 10)).id;
    const [payout] = await ok(api.post('/payouts', {}));
    await ok(api.put('/payouts', { payoutId: payout.id, status: 'PAID' }));
    const plan = await ok(
      api.post('/commission-plans', { name: 'Thirty days', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 30 }),
    );
    const patient = await ok(
      api.post('/affiliates', {
        firstName: 'pat',
        lastName: 'Tester',
        email: `pat-${randomUUID().slice(0, 8)}@example.com`,
        commissionPlanId: plan.id,
      }),
    );
    sales.PENDING = (await saleOf(api, patient.id, 10)).id;
    sales.HELD = (await saleOf(api, grace.id, 500)).id;
    const voided = await saleOf(api, grace.id, 20);
    await ok(api.post('/commissions/void', { saleId: voided.id, commissionId: voided.commissions[0].id, reason: 'test order' }));
    sales.VOID = voided.id;
    const reversed = await saleOf(api, grace.id, 30);
    await ok(api.delete('/sales', { saleId: reversed.id }));
    sales.REVERSED = reversed.id;
    sales.DUE = (await saleOf(api, grace.id, 40)).id;
  });

  test.each(['PENDING', 'DUE', 'HELD', 'PAID'])('status=%s: a page of one is that commission, with no next link', async (status) => {
    expect(await listed(status, 1)).toEqual({ items: [expect.objectContaining({ saleId: sales[status], status })], next: false });
  });

  test("status=VOID: a voided commission and a reversed sale's commission (voided by the reversal) are both listed, a page of one each", async () => {
    const first = await listed('VOID', 1);
    expect(first).toEqual({
      items: [
        expect.objectContaining({
          saleId: sales.REVERSED,
          status: 'VOID',
          decisions: [expect.objectContaining({ action: 'VOID', by: expect.objectContaining({ kind: 'REVERSAL' }) })],
        }),
      ],
      next: true,
    });
    expect((await listed('VOID', 10)).items.map((item) => item.saleId)).toEqual([sales.REVERSED, sales.VOID]);
  });
});

test('a key with the read scope sees the queue but cannot release or void (403 naming "write")', async () => {
  const { api, programId, grace } = await program({ maxAutoApprovedCommission: 1, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
  const sale = await saleOf(api, grace.id, 100);
  const created = await world.system.admin().post(`/admin/v1/programs/${programId}/api-keys`, { scopes: ['read'] });
  const reader = apiClient(`${world.system.gatewayUrl}/api/v1`, created.body.key);
  expect(await ok(reader.get('/commissions?status=HELD'))).toHaveLength(1);
  const refused = await reader.post('/commissions/release', { saleId: sale.id, commissionId: sale.commissions[0].id });
  expect(refused.status).toBe(403);
  expect(refused.body.error).toContain('"write"');
});

describe('affiliate statements', () => {
  const statement = (api: Api, affiliateId: string, from: Date, to?: Date) =>
    ok(
      api.get(
        `/affiliates/statement?affiliateId=${affiliateId}&currency=USD&from=${from.toISOString()}${to ? `&to=${to.toISOString()}` : ''}`,
      ),
    );
  const sumOf = (entries: { amount: number }[]) => Math.round(entries.reduce((total, entry) => total + entry.amount * 100, 0)) / 100;
  /** What the program owes, counted apart from the statement: the affiliate's open (PENDING or DUE) commissions in USD. */
  const owedByCommissions = async (api: Api, affiliateId: string) => {
    const commissions: { status: string; currency: string; amount: number }[] = await ok(
      api.get(`/commissions?affiliateId=${affiliateId}`),
    );
    return sumOf(commissions.filter((commission) => ['PENDING', 'DUE'].includes(commission.status) && commission.currency === 'USD'));
  };

  test('the sum of the entries is the closing minus the opening balance, for any period; a refund after payout is a negative balance the next payout offsets, never an overpayment', async () => {
    const { api, grace } = await program({ maxAutoApprovedCommission: 90, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
    const start = new Date(Date.now() - 1000);
    const first = await saleOf(api, grace.id, 100);
    const [payout] = await ok(api.post('/payouts', {}));
    await ok(api.put('/payouts', { payoutId: payout.id, status: 'PAID' }));
    const middle = new Date();
    await ok(api.delete('/sales', { saleId: first.id }));
    const held = await saleOf(api, grace.id, 500);
    await ok(api.post('/commissions/void', { saleId: held.id, commissionId: held.commissions[0].id, reason: 'test order' }));
    await saleOf(api, grace.id, 50);

    const owing = await statement(api, grace.id, start);
    expect(owing.entries.map((entry: { type: string }) => entry.type)).toEqual([
      'EARNED',
      'PAID_OUT',
      'ADJUSTED',
      'EARNED',
      'HELD',
      'VOIDED',
      'EARNED',
    ]);
    expect(owing).toMatchObject({ openingBalance: 0, closingBalance: -10 });
    expect(owing.entries.find((entry: { type: string }) => entry.type === 'ADJUSTED')).toMatchObject({ amount: -20, saleId: first.id });
    expect(owing.entries.find((entry: { type: string }) => entry.type === 'PAID_OUT')).toMatchObject({ amount: -20, payoutId: payout.id });
    // -20 taken back, 10 earned since: nothing to pay, the balance stays negative.
    expect(await ok(api.post('/payouts', {}))).toEqual([]);

    await saleOf(api, grace.id, 200);
    const [offset] = await ok(api.post('/payouts', {}));
    expect(offset.amount).toBe(30);
    // Counted apart from the statement, by the payout run over the due commissions and the refund's adjustment:
    // what was owed, plus the 40 earned since.
    expect(offset.amount).toBe(owing.closingBalance + 40);
    await ok(api.put('/payouts', { payoutId: offset.id, status: 'PAID' }));

    const whole = await statement(api, grace.id, start);
    expect(whole.closingBalance).toBe(0);
    expect(whole.closingBalance).toBe(await owedByCommissions(api, grace.id));
    for (const period of [whole, await statement(api, grace.id, middle), await statement(api, grace.id, middle, new Date())]) {
      expect(sumOf(period.entries)).toBe(Math.round((period.closingBalance - period.openingBalance) * 100) / 100);
    }
    expect((await statement(api, grace.id, middle)).openingBalance).toBe(0);

    const csv = await api.request(
      'GET',
      `/affiliates/statement?affiliateId=${grace.id}&currency=USD&from=${start.toISOString()}&format=csv`,
    );
    expect(csv.status).toBe(200);
    const rows = parse(String(csv.body), { columns: true }) as { type: string; amount: string }[];
    expect(rows[0]).toMatchObject({ type: 'OPENING_BALANCE', amount: '0' });
    expect(rows.at(-1)).toMatchObject({ type: 'CLOSING_BALANCE', amount: '0' });
    expect(rows).toHaveLength(whole.entries.length + 2);
  });
});

test('RELEASED on the statement: a held commission released adds back what HELD took away, and its payout is PAID_OUT; the entries add up to closing minus opening', async () => {
  const { api, grace } = await program({ maxAutoApprovedCommission: 10, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
  const start = new Date(Date.now() - 1000);
  const sale = await saleOf(api, grace.id, 100);
  const held = await ok(api.get(`/affiliates/statement?affiliateId=${grace.id}&currency=USD&from=${start.toISOString()}`));
  expect(held).toMatchObject({
    closingBalance: 0,
    entries: [expect.objectContaining({ type: 'EARNED', amount: 20 }), expect.objectContaining({ type: 'HELD', amount: -20 })],
  });
  await ok(api.post('/commissions/release', { saleId: sale.id, commissionId: sale.commissions[0].id, note: 'checked' }));
  const [payout] = await ok(api.post('/payouts', {}));
  await ok(api.put('/payouts', { payoutId: payout.id, status: 'PAID' }));
  const whole = await ok(api.get(`/affiliates/statement?affiliateId=${grace.id}&currency=USD&from=${start.toISOString()}`));
  expect(whole.entries.map((entry: { type: string; amount: number }) => [entry.type, entry.amount])).toEqual([
    ['EARNED', 20],
    ['HELD', -20],
    ['RELEASED', 20],
    ['PAID_OUT', -20],
  ]);
  expect(whole.entries[2]).toMatchObject({ saleId: sale.id, commissionId: sale.commissions[0].id, description: 'released: checked' });
  expect(whole).toMatchObject({ openingBalance: 0, closingBalance: 0 });
});

test('a statement whose period ends before it starts (from after to) is a 400 naming to', async () => {
  const { api, grace } = await program();
  const refused = await api.get(
    `/affiliates/statement?affiliateId=${grace.id}&currency=USD&from=2026-02-01T00:00:00.000Z&to=2026-01-01T00:00:00.000Z`,
  );
  expect(refused.status).toBe(400);
  expect(refused.body.error).toContain('to: must not be before from');
});

test('the affiliate report shows the commission held for review and the commission voided', async () => {
  const { api, grace } = await program({ maxAutoApprovedCommission: 1, riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' } });
  await saleOf(api, grace.id, 100);
  const voided = await saleOf(api, grace.id, 50);
  await ok(api.post('/commissions/void', { saleId: voided.id, commissionId: voided.commissions[0].id, reason: 'duplicate order' }));
  const from = encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString());
  const rows = await ok(api.get(`/reports/affiliates?from=${from}`));
  expect(rows.find((row: { affiliateId: string }) => row.affiliateId === grace.id)).toMatchObject({
    commissionEarned: 20,
    commissionHeld: 20,
    commissionVoided: 10,
    commissionDue: 0,
  });
});
