import { randomUUID } from 'node:crypto';
import { eventually } from '@affiliate/platform/testing';
import { parse } from 'csv-parse/sync';
import { okBody as ok, type Api } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * Payouts and the report through the gateway (issue 16): minimum payout, payout runs under
 * concurrency, PAID and FAILED, reversals before and after payment, the CSV a finance team uploads,
 * and the sale.updated each step sends. Each test has a program of its own.
 */
const world = systemWithSubscriber();

/** A program whose default plan pays 20 % with no hold, so every commission is DUE at once. */
async function program(plan: Record<string, unknown> = {}): Promise<{ api: Api; planId: string }> {
  const { api } = await world.system.createProgram();
  await ok(api.post('/webhook-endpoints', { url: world.hooks, eventTypes: ['sale.updated'] }));
  const created = await ok(
    api.post('/commission-plans', {
      name: 'Payouts',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
      ...plan,
    }),
  );
  return { api, planId: created.id };
}

async function affiliate(api: Api, fields: Record<string, unknown> = {}) {
  return ok(
    api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: `grace-${randomUUID().slice(0, 8)}@example.com`, ...fields }),
  );
}

/** A sale of `total` credited to the affiliate (commission: 20 % of it). */
async function saleOf(api: Api, affiliateId: string, total: number, fields: Record<string, unknown> = {}) {
  const referral = await ok(api.post('/referrals', { affiliateId, email: `c-${randomUUID().slice(0, 8)}@example.com` }));
  return ok(api.post('/sales', { referralId: referral.id, totalEarned: total, ...fields }));
}

const commissionOf = async (api: Api, saleId: string) => (await ok(api.get(`/sales?id=${saleId}`))).commissions[0];

/** The sale's states its sale.updated webhooks carried, oldest revision first. */
const saleUpdates = (saleId: string) => world.subscriber.revisionsOf('sale.updated', saleId);

test('POST /payouts gathers the DUE commissions of an affiliate into one payout, marks them, and sends sale.updated for each sale', async () => {
  const { api } = await program();
  const grace = await affiliate(api);
  const sales = [await saleOf(api, grace.id, 100), await saleOf(api, grace.id, 50.5)];
  const [payout, ...more] = await ok(api.post('/payouts', {}));
  expect(more).toEqual([]);
  expect(payout).toMatchObject({
    affiliateId: grace.id,
    amount: 30.1,
    currency: 'USD',
    status: 'PENDING',
    payee: { name: 'Grace Hopper', email: grace.email },
  });
  expect(payout.commissions.map((item: { saleId: string }) => item.saleId).sort()).toEqual(sales.map((sale) => sale.id).sort());
  for (const sale of sales) {
    expect(await commissionOf(api, sale.id)).toMatchObject({ status: 'DUE', payoutCreated: true, payoutId: payout.id });
    await eventually(
      () => expect(saleUpdates(sale.id).at(-1)?.commissions[0]).toMatchObject({ payoutCreated: true, payoutId: payout.id, status: 'DUE' }),
      20_000,
    );
  }
  expect(await ok(api.post('/payouts', {}))).toEqual([]);
  expect(await ok(api.get(`/payouts?affiliateId=${grace.id}`))).toEqual([expect.objectContaining({ id: payout.id })]);
});

test("no payout until the affiliate's due total reaches the plan's minimumPayout; held (PENDING) commissions are not due", async () => {
  const { api } = await program({ minimumPayout: 50 });
  const grace = await affiliate(api);
  await saleOf(api, grace.id, 100);
  await saleOf(api, grace.id, 100);
  expect(await ok(api.post('/payouts', {}))).toEqual([]);
  const held = await ok(
    api.post('/commission-plans', { name: 'Held', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 30 }),
  );
  const other = await affiliate(api, { commissionPlanId: held.id });
  const pending = await saleOf(api, other.id, 1000);
  await saleOf(api, grace.id, 100);
  const payouts = await ok(api.post('/payouts', {}));
  expect(payouts).toEqual([expect.objectContaining({ affiliateId: grace.id, amount: 60 })]);
  expect(await commissionOf(api, pending.id)).toMatchObject({ status: 'PENDING', payoutCreated: false });
});

test('payout runs started at the same moment never put a commission in two payouts', async () => {
  const { api } = await program();
  const team = [await affiliate(api), await affiliate(api)];
  const sales = [];
  for (let index = 0; index < 12; index += 1) sales.push(await saleOf(api, team[index % 2]!.id, 10 + index));
  const runs = await Promise.all(Array.from({ length: 6 }, () => api.post('/payouts', {})));
  const payouts = runs.flatMap((run) => (run.status === 200 ? run.body : []));
  expect(runs.every((run) => run.status === 200 || run.status === 409)).toBe(true);
  const claimed = payouts.flatMap((payout: { commissions: { commissionId: string }[] }) =>
    payout.commissions.map((item) => item.commissionId),
  );
  expect(new Set(claimed).size).toBe(claimed.length);
  expect(claimed).toHaveLength(12);
  expect(payouts.map((payout: { affiliateId: string }) => payout.affiliateId).sort()).toEqual(team.map((member) => member.id).sort());
  const total = payouts.reduce((sum: number, payout: { amount: number }) => sum + payout.amount, 0);
  expect(total).toBeCloseTo(
    sales.reduce((sum, sale) => sum + sale.commissionEarned, 0),
    6,
  );
});

test('PUT /payouts PAID marks its commissions PAID with sale.updated; the same PUT again changes nothing; FAILED after PAID is a 400', async () => {
  const { api } = await program();
  const grace = await affiliate(api);
  const sale = await saleOf(api, grace.id, 40);
  const [payout] = await ok(api.post('/payouts', {}));
  const paid = await ok(api.put('/payouts', { payoutId: payout.id, status: 'PAID', externalReference: 'batch-2026-11' }));
  expect(paid).toMatchObject({ status: 'PAID', externalReference: 'batch-2026-11', paidAt: expect.any(String) });
  expect(await commissionOf(api, sale.id)).toMatchObject({ status: 'PAID', payoutCreated: true, payoutId: payout.id });
  await eventually(
    () => expect(saleUpdates(sale.id).at(-1)?.commissions[0]).toMatchObject({ status: 'PAID', payoutId: payout.id }),
    20_000,
  );
  expect(await ok(api.put('/payouts', { payoutId: payout.id, status: 'PAID' }))).toMatchObject({ status: 'PAID', paidAt: paid.paidAt });
  expect(await api.put('/payouts', { payoutId: payout.id, status: 'FAILED' })).toMatchObject({
    status: 400,
    body: { error: `Payout ${payout.id} is PAID; it cannot become FAILED` },
  });
  expect(await ok(api.get(`/payouts?status=PAID`))).toEqual([expect.objectContaining({ id: payout.id })]);
});

test('PUT /payouts FAILED gives its commissions back (DUE, in no payout) with sale.updated, and the next run pays them', async () => {
  const { api } = await program();
  const grace = await affiliate(api);
  const sale = await saleOf(api, grace.id, 40);
  const [payout] = await ok(api.post('/payouts', {}));
  expect(await ok(api.put('/payouts', { payoutId: payout.id, status: 'FAILED' }))).toMatchObject({ status: 'FAILED', paidAt: null });
  expect(await commissionOf(api, sale.id)).toMatchObject({ status: 'DUE', payoutCreated: false, payoutId: null });
  await eventually(
    () => expect(saleUpdates(sale.id).at(-1)?.commissions[0]).toMatchObject({ status: 'DUE', payoutCreated: false, payoutId: null }),
    20_000,
  );
  const [again] = await ok(api.post('/payouts', {}));
  expect(again).toMatchObject({ amount: 8, commissions: [expect.objectContaining({ saleId: sale.id })] });
  expect(again.id).not.toBe(payout.id);
});

test('reversing a sale before payout voids its commission, which no payout gathers', async () => {
  const { api } = await program();
  const grace = await affiliate(api);
  const kept = await saleOf(api, grace.id, 100);
  const refunded = await saleOf(api, grace.id, 100);
  await ok(api.delete('/sales', { saleId: refunded.id }));
  const [payout] = await ok(api.post('/payouts', {}));
  expect(payout).toMatchObject({ amount: 20, commissions: [expect.objectContaining({ saleId: kept.id })] });
});

test("reversing a sale after its commission was paid deducts it from the affiliate's next payout as a negative adjustment", async () => {
  const { api } = await program();
  const grace = await affiliate(api);
  const refunded = await saleOf(api, grace.id, 100);
  const [first] = await ok(api.post('/payouts', {}));
  await ok(api.put('/payouts', { payoutId: first.id, status: 'PAID' }));
  await ok(api.delete('/sales', { saleId: refunded.id }));
  const later = await saleOf(api, grace.id, 150);
  const [next] = await ok(api.post('/payouts', {}));
  expect(next.amount).toBe(10);
  expect(next.commissions.map((item: { saleId: string; amount: number }) => [item.saleId, item.amount]).sort()).toEqual(
    [
      [refunded.id, -20],
      [later.id, 30],
    ].sort(),
  );
  // Alone, an adjustment pays nothing: it waits for commissions to deduct it from.
  await ok(api.put('/payouts', { payoutId: next.id, status: 'PAID' }));
  const again = await saleOf(api, grace.id, 50);
  const [third] = await ok(api.post('/payouts', {}));
  await ok(api.put('/payouts', { payoutId: third.id, status: 'PAID' }));
  await ok(api.delete('/sales', { saleId: again.id }));
  expect(await ok(api.post('/payouts', {}))).toEqual([]);
});

test('the payout CSV names the affiliate, the payout method and details, the amount and the currency, and defuses formulas', async () => {
  const { api } = await program();
  const grace = await affiliate(api, { firstName: '=HYPERLINK("http://x")', lastName: 'Hopper' });
  await ok(
    api.put('/affiliates', {
      affiliateId: grace.id,
      payoutDetails: { method: 'BANK_TRANSFER', accountHolder: 'Grace Hopper', iban: 'DE89 3704 0044 0532 0130 00', note: 'monthly' },
    }),
  );
  await saleOf(api, grace.id, 123.45, { currency: 'EUR' });
  const [payout] = await ok(api.post('/payouts', { currency: 'EUR' }));
  const exported = await api.get(`/payouts/export?payoutId=${payout.id}`);
  expect(exported.status).toBe(200);
  expect(exported.headers.get('content-type')).toMatch(/^text\/csv/);
  expect(parse(exported.body as string, { columns: true })).toEqual([
    {
      payout_id: payout.id,
      affiliate_id: grace.id,
      name: `'=HYPERLINK("http://x") Hopper`,
      email: grace.email,
      payout_method: 'BANK_TRANSFER',
      payout_email: '',
      account_holder: 'Grace Hopper',
      iban: 'DE89370400440532013000',
      note: 'monthly',
      amount: '24.69',
      currency: 'EUR',
      status: 'PENDING',
    },
  ]);
  const listed = await api.request('GET', '/payouts', undefined, { accept: 'text/csv' });
  expect(listed.headers.get('content-type')).toMatch(/^text\/csv/);
  expect(parse(listed.body as string, { columns: true })).toHaveLength(1);
  // The JSON shows the IBAN by its last four characters only.
  expect((await ok(api.get(`/payouts?id=${payout.id}`))).payee.payoutDetails).toMatchObject({ ibanLast4: '3000' });
});

test('GET /reports/affiliates gives clicks, referrals, sales, revenue and commission earned, due and paid per affiliate, in JSON and CSV', async () => {
  const { api } = await program();
  const grace = await affiliate(api, { affiliateLink: `grace-${randomUUID().slice(0, 6)}` });
  const idle = await affiliate(api);
  const slug = grace.affiliateLinks[0].link;
  for (let index = 0; index < 3; index += 1) await ok(api.post('/clicks', { link: slug }));
  const paidSale = await saleOf(api, grace.id, 100);
  const [payout] = await ok(api.post('/payouts', {}));
  await ok(api.put('/payouts', { payoutId: payout.id, status: 'PAID' }));
  await saleOf(api, grace.id, 50);
  const refunded = await saleOf(api, grace.id, 10);
  await ok(api.delete('/sales', { saleId: refunded.id }));
  expect(paidSale.commissionEarned).toBe(20);

  const expected = {
    affiliateId: grace.id,
    clicks: 3,
    referrals: 3,
    sales: 2,
    revenue: 150,
    commissionEarned: 30,
    commissionDue: 10,
    commissionPaid: 20,
  };
  // The period is required (at most 366 days): the last day covers everything this test made.
  const lastDay = `from=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}`;
  await eventually(async () => {
    const rows = await ok(api.get(`/reports/affiliates?${lastDay}`));
    expect(rows.find((row: { affiliateId: string }) => row.affiliateId === grace.id)).toMatchObject(expected);
  }, 20_000);
  const rows = await ok(api.get(`/reports/affiliates?${lastDay}`));
  expect(rows.find((row: { affiliateId: string }) => row.affiliateId === idle.id)).toMatchObject({
    clicks: 0,
    sales: 0,
    commissionEarned: 0,
  });
  const future = (ms: number) => encodeURIComponent(new Date(Date.now() + ms).toISOString());
  expect(await ok(api.get(`/reports/affiliates?from=${future(60_000)}&to=${future(120_000)}`))).toEqual(
    expect.arrayContaining([expect.objectContaining({ affiliateId: grace.id, clicks: 0, sales: 0 })]),
  );
  const csv = await api.request('GET', `/reports/affiliates?${lastDay}`, undefined, { accept: 'text/csv' });
  const line = (parse(csv.body as string, { columns: true }) as Record<string, string>[]).find((row) => row.affiliate_id === grace.id);
  expect(line).toMatchObject({
    clicks: '3',
    referrals: '3',
    sales: '2',
    revenue: '150',
    commission_earned: '30',
    commission_due: '10',
    commission_paid: '20',
  });
  expect((await api.get('/reports/affiliates?from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z')).status).toBe(400);
});

test('GET /reports/affiliates requires from, and a period of at most 366 days: otherwise a 400 naming the field', async () => {
  const { api } = await program();
  const missing = await api.get('/reports/affiliates');
  expect(missing.status).toBe(400);
  expect(missing.body.error).toBe('from is required');
  const tooLong = await api.get('/reports/affiliates?from=2024-01-01T00:00:00Z&to=2025-01-02T00:00:01Z');
  expect(tooLong.status).toBe(400);
  expect(tooLong.body.error).toMatch(/^to: the period .* spans at most 366 days/);
  const openEnded = await api.get('/reports/affiliates?from=2020-01-01T00:00:00Z');
  expect(openEnded.status).toBe(400);
  expect(openEnded.body.error).toMatch(/^to: .* at most 366 days/);
  expect((await api.get('/reports/affiliates?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z')).status).toBe(200);
});

test("one program's payouts are invisible and unchangeable to another program", async () => {
  const { api } = await program();
  const grace = await affiliate(api);
  await saleOf(api, grace.id, 10);
  const [payout] = await ok(api.post('/payouts', {}));
  const { api: stranger } = await program();
  expect((await stranger.get(`/payouts?id=${payout.id}`)).status).toBe(404);
  expect((await stranger.put('/payouts', { payoutId: payout.id, status: 'PAID' })).status).toBe(404);
  expect((await stranger.get(`/payouts/export?payoutId=${payout.id}`)).status).toBe(404);
  expect(await ok(stranger.post('/payouts', {}))).toEqual([]);
});

/**
 * The sale service is killed once a run has claimed a commission. The moment cannot be chosen from
 * outside: with 300 commissions (one batch of claims) the run may have finished by then. So this
 * proves that a kill around a run loses and doubles nothing; the recovery of a run killed half-way
 * (its drafts, part of their commissions claimed) is proved exactly by
 * services/sale/test/payouts.dead-run.test.ts.
 */
test('a payout run killed half-way is finished by the next run: every commission ends in exactly one payout', async () => {
  const { api } = await program();
  const team = [await affiliate(api), await affiliate(api), await affiliate(api)];
  const referrals = await Promise.all(
    team.map((member) => ok(api.post('/referrals', { affiliateId: member.id, email: `c-${randomUUID().slice(0, 8)}@example.com` }))),
  );
  let next = 0;
  const seller = async () => {
    for (let index = next++; index < 300; index = next++)
      await ok(api.post('/sales', { referralId: referrals[index % 3]!.id, totalEarned: 10 }));
  };
  await Promise.all(Array.from({ length: 8 }, seller));

  const interrupted = api.post('/payouts', {}).catch(() => null);
  const claimedAny = async () =>
    (await ok(api.get('/sales?limit=1000'))).some(
      (sale: { commissions: { payoutCreated: boolean }[] }) => sale.commissions[0]?.payoutCreated,
    );
  const deadline = Date.now() + 20_000;
  while (!(await claimedAny()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  await world.system.kill('sale');
  await interrupted;
  await world.system.launch('sale');
  await world.system.waitReady('sale');

  // The dead run's lease holds the program's payouts for a few seconds (409), then a run finishes its draft and pays the rest.
  const finishedBy = Date.now() + 60_000;
  for (;;) {
    const answer = await api.post('/payouts', {});
    if (answer.status === 200 && answer.body.length === 0) break;
    if (Date.now() > finishedBy) throw new Error(`payouts never finished: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    if (answer.status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const payouts = await ok(api.get('/payouts?limit=1000'));
  const claimed = payouts.flatMap((payout: { id: string; commissions: { saleId: string; commissionId: string }[] }) =>
    payout.commissions.map((item) => ({ ...item, payoutId: payout.id })),
  );
  expect(new Set(claimed.map((item: { commissionId: string }) => item.commissionId)).size).toBe(300);
  expect(claimed).toHaveLength(300);
  const sales = await ok(api.get('/sales?limit=1000'));
  const payoutOf = new Map(claimed.map((item: { saleId: string; payoutId: string }) => [item.saleId, item.payoutId]));
  for (const sale of sales)
    expect({ sale: sale.id, payoutId: sale.commissions[0].payoutId }).toEqual({ sale: sale.id, payoutId: payoutOf.get(sale.id) });
}, 120_000);
