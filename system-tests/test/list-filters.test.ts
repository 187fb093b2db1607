import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { eventually } from '@affiliate/platform/testing';
import { okBody as ok, type Api } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * The list filters and CSV exports through the gateway (issue 31): status, affiliateId, currency and
 * periods (`paidAt[gte]`, `paidAt[lt]`) on sales, commissions and referrals; format=csv with the
 * filters applied and formulas defused; unknown parameters refused; another program's rows never
 * listed. Each test has a program of its own.
 */
const world = systemWithSubscriber();

/** A program paying 20 % with no hold (every commission DUE at once), two affiliates, a referral each. */
async function program() {
  const { api } = await world.system.createProgram();
  await ok(
    api.post('/commission-plans', {
      name: 'Now',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  const person = async (firstName: string) => {
    const affiliate = await ok(
      api.post('/affiliates', {
        firstName,
        lastName: 'Filters',
        email: `${firstName.toLowerCase()}-${randomUUID().slice(0, 8)}@example.com`,
      }),
    );
    const referral = await ok(api.post('/referrals', { affiliateId: affiliate.id, email: `c-${randomUUID().slice(0, 8)}@example.com` }));
    return { affiliate, referral };
  };
  return { api, grace: await person('Grace'), ada: await person('Ada') };
}

/** An exact instant in the past (sales may be reported with the time they were paid). */
const hoursAgo = (hours: number) => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - hours * 3_600_000).toISOString();

const ids = (list: { id: string }[]) => list.map((item) => item.id);
const csvOf = async (api: Api, path: string, headers: Record<string, string> = {}) => {
  const answer = await api.request('GET', path, undefined, headers);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^text\/csv/);
  return parse(answer.body as string, { columns: true }) as Record<string, string>[];
};

test('GET /sales filters by affiliateId, currency and a paidAt period whose bounds are exact (gte included, lt excluded)', async () => {
  const { api, grace, ada } = await program();
  const [t1, t2, t3] = [hoursAgo(30), hoursAgo(20), hoursAgo(10)];
  const graceUsd = await ok(api.post('/sales', { referralId: grace.referral.id, totalEarned: 100, paidAt: t1 }));
  const graceEur = await ok(api.post('/sales', { referralId: grace.referral.id, totalEarned: 50, currency: 'EUR', paidAt: t2 }));
  const adaUsd = await ok(api.post('/sales', { referralId: ada.referral.id, totalEarned: 10, paidAt: t3 }));

  expect(ids(await ok(api.get(`/sales?affiliateId=${grace.affiliate.id}`))).sort()).toEqual([graceUsd.id, graceEur.id].sort());
  expect(ids(await ok(api.get('/sales?currency=eur')))).toEqual([graceEur.id]);
  expect(ids(await ok(api.get(`/sales?currency=USD&affiliateId=${ada.affiliate.id}`)))).toEqual([adaUsd.id]);
  expect(ids(await ok(api.get(`/sales?paidAt[gte]=${t1}&paidAt[lt]=${t2}`)))).toEqual([graceUsd.id]);
  expect(ids(await ok(api.get(`/sales?paidAt%5Bgte%5D=${encodeURIComponent(t2)}&paidAt%5Blt%5D=${encodeURIComponent(t3)}`)))).toEqual([
    graceEur.id,
  ]);
  expect(ids(await ok(api.get(`/sales?paidAt[gte]=${t3}`)))).toEqual([adaUsd.id]);
  // Every sale was recorded just now, whatever its paidAt.
  expect(await ok(api.get(`/sales?createdAt[lt]=${t3}`))).toEqual([]);
});

test('format=csv on /sales and /commissions streams the filtered rows with a header row, and defuses a formula an integrator sent', async () => {
  const { api, grace, ada } = await program();
  const formula = await ok(
    api.post('/sales', {
      referralId: grace.referral.id,
      totalEarned: 100,
      customerId: '=HYPERLINK("http://evil.example")',
      externalId: '@SUM(A1)',
    }),
  );
  await ok(api.post('/sales', { referralId: grace.referral.id, totalEarned: 30, currency: 'EUR' }));
  await ok(api.post('/sales', { referralId: ada.referral.id, totalEarned: 10 }));

  const sales = await csvOf(api, `/sales?format=csv&currency=USD&affiliateId=${grace.affiliate.id}`);
  expect(sales).toEqual([
    expect.objectContaining({
      id: formula.id,
      affiliate_id: grace.affiliate.id,
      customer_id: `'=HYPERLINK("http://evil.example")`,
      external_id: "'@SUM(A1)",
      total_earned: '100.00',
      currency: 'USD',
      commission_earned: '20.00',
    }),
  ]);
  expect(await csvOf(api, '/sales?currency=EUR', { accept: 'text/csv' })).toEqual([
    expect.objectContaining({ currency: 'EUR', total_earned: '30.00' }),
  ]);

  const commissions = await csvOf(api, `/commissions?format=csv&status=DUE&affiliateId=${grace.affiliate.id}`);
  expect(commissions.map((row) => [row.currency, row.amount, row.status, row.affiliate_id]).sort()).toEqual([
    ['EUR', '6.00', 'DUE', grace.affiliate.id],
    ['USD', '20.00', 'DUE', grace.affiliate.id],
  ]);
  const listed = await ok(api.get(`/commissions?currency=EUR`));
  expect(listed.map((commission: { currency: string; amount: number }) => [commission.currency, commission.amount])).toEqual([['EUR', 6]]);
  expect(await csvOf(api, '/commissions?format=csv&status=HELD')).toEqual([]);
});

test('GET /referrals filters by status and exports the filtered referrals as CSV', async () => {
  const { api, grace, ada } = await program();
  await ok(api.put('/referrals', { referralId: ada.referral.id, status: 'inactive' }));
  expect(ids(await ok(api.get('/referrals?status=inactive')))).toEqual([ada.referral.id]);
  expect(ids(await ok(api.get('/referrals?status=active')))).toEqual([grace.referral.id]);
  const rows = await csvOf(api, '/referrals?format=csv&status=active');
  expect(rows).toEqual([
    expect.objectContaining({ id: grace.referral.id, affiliate_id: grace.affiliate.id, email: grace.referral.email, status: 'active' }),
  ]);
});

test('an unknown or misspelt filter is a 400 naming it, and the list it was meant for is unchanged', async () => {
  const { api, grace } = await program();
  const sale = await ok(api.post('/sales', { referralId: grace.referral.id, totalEarned: 100 }));
  for (const [path, parameter] of [
    ['/sales?curency=USD', 'curency'],
    ['/affiliates?createdAt[gt]=2026-01-01T00:00:00Z', 'createdAt[gt]'],
    ['/commissions?format=csv&statuses=DUE', 'statuses'],
    ['/referrals?affiliate=x', 'affiliate'],
  ]) {
    const refused = await api.get(path as string);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(`Unknown field in query: ${parameter}`);
  }
  expect((await api.get('/sales?currency=dollars')).status).toBe(400);
  expect(ids(await ok(api.get('/sales')))).toEqual([sale.id]);
});

test("another program's rows never appear in a filtered list or export, even when filtered by that program's affiliate", async () => {
  const mine = await program();
  const theirs = await program();
  await ok(mine.api.post('/sales', { referralId: mine.grace.referral.id, totalEarned: 100 }));
  const their = await ok(theirs.api.post('/sales', { referralId: theirs.grace.referral.id, totalEarned: 100 }));
  expect(await ok(mine.api.get(`/sales?affiliateId=${theirs.grace.affiliate.id}`))).toEqual([]);
  expect(await ok(mine.api.get(`/commissions?affiliateId=${theirs.grace.affiliate.id}`))).toEqual([]);
  expect(await csvOf(mine.api, `/sales?format=csv&affiliateId=${theirs.grace.affiliate.id}`)).toEqual([]);
  expect((await csvOf(mine.api, '/sales?format=csv&currency=USD')).map((row) => row.id)).not.toContain(their.id);
  expect((await csvOf(mine.api, '/affiliates?format=csv')).map((row) => row.id).sort()).toEqual(
    [mine.grace.affiliate.id, mine.ada.affiliate.id].sort(),
  );
  expect((await csvOf(mine.api, '/commissions?format=csv')).map((row) => row.sale_id)).not.toContain(their.id);
});

test("GET /commissions takes a paidAt period (of its sale's payment), as GET /sales, in the list and the export", async () => {
  const { api, grace } = await program();
  const [t1, t2] = [hoursAgo(30), hoursAgo(10)];
  const early = await ok(api.post('/sales', { referralId: grace.referral.id, totalEarned: 100, paidAt: t1 }));
  const late = await ok(api.post('/sales', { referralId: grace.referral.id, totalEarned: 50, paidAt: t2 }));
  const saleIds = (list: { saleId: string }[]) => list.map((commission) => commission.saleId);
  expect(saleIds(await ok(api.get(`/commissions?paidAt[gte]=${t1}&paidAt[lt]=${t2}`)))).toEqual([early.id]);
  expect(saleIds(await ok(api.get(`/commissions?paidAt[gte]=${t2}`)))).toEqual([late.id]);
  expect((await csvOf(api, `/commissions?format=csv&paidAt[lt]=${t2}`)).map((row) => row.sale_id)).toEqual([early.id]);
  expect((await api.get(`/commissions?paidAt[gte]=${t2}&paidAt[lt]=${t1}`)).status).toBe(400);
});

test('GET /webhook-deliveries takes a createdAt period (gte included, lt excluded; gte = lt an empty list), as the other lists', async () => {
  const { api } = await world.system.createProgram();
  const endpoint = await ok(api.post('/webhook-endpoints', { url: world.hooks, eventTypes: ['affiliate.created'] }));
  const before = new Date(Date.now() - 60_000).toISOString();
  await ok(api.post('/affiliates', { firstName: 'Hook', lastName: 'Filters', email: `hook-${randomUUID().slice(0, 8)}@example.com` }));
  const [delivery] = await eventually(async () => {
    const deliveries = await ok<{ id: string; createdAt: string }[]>(api.get(`/webhook-deliveries?endpointId=${endpoint.id}`));
    expect(deliveries).toHaveLength(1);
    return deliveries;
  }, 30_000);
  const at = encodeURIComponent(delivery!.createdAt);
  const after = new Date(Date.parse(delivery!.createdAt) + 60_000).toISOString();
  expect(ids(await ok(api.get(`/webhook-deliveries?createdAt[gte]=${at}`)))).toEqual([delivery!.id]);
  expect(await ok(api.get(`/webhook-deliveries?createdAt[lt]=${at}`))).toEqual([]);
  expect(ids(await ok(api.get(`/webhook-deliveries?endpointId=${endpoint.id}&createdAt[gte]=${before}&createdAt[lt]=${after}`)))).toEqual([
    delivery!.id,
  ]);
  expect(await ok(api.get(`/webhook-deliveries?createdAt[gte]=${at}&createdAt[lt]=${at}`))).toEqual([]);
  const reversed = await api.get(`/webhook-deliveries?createdAt[gte]=${after}&createdAt[lt]=${before}`);
  expect(reversed.status).toBe(400);
  expect(reversed.body.error).toBe('createdAt[gte] must not be after createdAt[lt]');
});

test('a list parameter beside a lookup by id (a filter, a period, a page) is a 400 naming it, on /sales, /payouts and /events; the lookup alone answers', async () => {
  const { api, grace } = await program();
  const sale = await ok(api.post('/sales', { referralId: grace.referral.id, totalEarned: 100 }));
  const [payout] = await ok<{ id: string }[]>(api.post('/payouts', {}));
  const [event] = await eventually(async () => {
    const events = await ok<{ id: string }[]>(api.get('/events?type=sale.created'));
    expect(events).toHaveLength(1);
    return events;
  }, 30_000);
  for (const [path, parameter] of [
    [`/sales?id=${sale.id}&currency=EUR`, 'currency'],
    [`/sales?id=${sale.id}&affiliateId=${grace.affiliate.id}`, 'affiliateId'],
    [`/sales?id=${sale.id}&limit=5`, 'limit'],
    [`/payouts?id=${payout!.id}&createdAt[gte]=${hoursAgo(1)}`, 'createdAt[gte]'],
    [`/payouts?id=${payout!.id}&status=PAID`, 'status'],
    [`/events?id=${event!.id}&type=affiliate.created`, 'type'],
    [`/events?id=${event!.id}&createdAt[lt]=${hoursAgo(1)}`, 'createdAt[lt]'],
  ]) {
    const refused = await api.get(path as string);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(`${parameter} applies to the list: it does not combine with id`);
  }
  expect((await ok(api.get(`/sales?id=${sale.id}`))).id).toBe(sale.id);
  expect((await ok(api.get(`/payouts?id=${payout!.id}`))).id).toBe(payout!.id);
  expect((await ok(api.get(`/events?id=${event!.id}`))).id).toBe(event!.id);
});

test('a parameter an operation does not take is a 400 naming it, on the lists that take only a page and the reads that take none (API and admin)', async () => {
  const { api, programId } = await world.system.createProgram();
  const admin = world.system.admin();
  for (const [client, path, parameter] of [
    [api, '/audit-records?action=api_key.created', 'action'],
    [api, '/event-types?type=sale.created', 'type'],
    [api, '/publishable-keys?limit=1', 'limit'],
    [api, '/program?fields=name', 'fields'],
    [admin, '/admin/v1/programs?name=x', 'name'],
    [admin, '/admin/v1/audit-records?actor=x', 'actor'],
    [admin, `/admin/v1/programs/${programId}/api-keys?revoked=false`, 'revoked'],
  ] as [Api, string, string][]) {
    const refused = await client.get(path);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(`Unknown field in query: ${parameter}`);
  }
  for (const path of ['/audit-records?limit=1', '/event-types', '/publishable-keys', '/program'])
    expect((await api.get(path)).status).toBe(200);
  for (const path of ['/admin/v1/programs?limit=1', '/admin/v1/audit-records?limit=1']) expect((await admin.get(path)).status).toBe(200);
});
