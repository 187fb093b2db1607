import { randomUUID } from 'node:crypto';
import { eventually } from '@affiliate/platform/testing';
import { okBody as ok, type Api } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * Commission plans through the gateway (issue 16): what a sale earns under each kind of plan, the
 * recurring rules across months, the first-payment rate, tiers, the hold, and the events that carry
 * plan and tier changes. Each test has a program of its own.
 */
const world = systemWithSubscriber();

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();

async function program(): Promise<Api> {
  const { api } = await world.system.createProgram();
  await ok(
    api.post('/webhook-endpoints', {
      url: world.hooks,
      eventTypes: ['affiliate.created', 'affiliate.updated', 'sale.created', 'sale.updated'],
    }),
  );
  return api;
}

async function affiliateOn(api: Api, fields: Record<string, unknown> = {}) {
  return ok(
    api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: `ada-${randomUUID().slice(0, 8)}@example.com`, ...fields }),
  );
}

async function customerOf(api: Api, affiliateId: string) {
  return ok(api.post('/referrals', { affiliateId, email: `customer-${randomUUID().slice(0, 8)}@example.com` }));
}

const sale = (api: Api, body: Record<string, unknown>) => ok(api.post('/sales', { totalEarned: 100, currency: 'USD', ...body }));

const eventsAbout = (type: string, id: string) =>
  world.subscriber
    .events(type)
    .filter((delivery) => delivery.body.data.id === id)
    .map((delivery) => delivery.body.data);

test('a PERCENTAGE plan pays its rate of totalEarned, rounded once, in the currency of the sale', async () => {
  const api = await program();
  const plan = await ok(
    api.post('/commission-plans', { name: 'Standard 12.5%', commissionType: 'PERCENTAGE', rate: 12.5, recurring: 'FOREVER' }),
  );
  expect(plan).toMatchObject({ commissionType: 'PERCENTAGE', rate: 12.5, holdDays: 30, currency: null, isDefault: false, tiers: [] });
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  expect(affiliate.commissionPlan).toEqual({ id: plan.id, name: 'Standard 12.5%' });

  const recorded = await sale(api, { referralId: (await customerOf(api, affiliate.id)).id, totalEarned: 19.99, currency: 'EUR' });
  expect(recorded).toMatchObject({ commissionRate: 12.5, commissionEarned: 2.5, commissionPlanId: plan.id });
  expect(recorded.commissions).toEqual([
    expect.objectContaining({ amount: 2.5, currency: 'EUR', status: 'PENDING', commissionPlanId: plan.id }),
  ]);
});

test('a FLAT plan pays its amount per sale in the plan currency, whatever the sale amount', async () => {
  const api = await program();
  const plan = await ok(
    api.post('/commission-plans', { name: 'Bounty', commissionType: 'FLAT', rate: 25, currency: 'usd', recurring: 'ONCE' }),
  );
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  const small = await sale(api, { email: (await customerOf(api, affiliate.id)).email, totalEarned: 5 });
  const large = await sale(api, { referralId: (await customerOf(api, affiliate.id)).id, totalEarned: 5000 });
  for (const recorded of [small, large]) {
    expect(recorded).toMatchObject({ commissionRate: null, commissionEarned: 25 });
    expect(recorded.commissions[0]).toMatchObject({ amount: 25, currency: 'USD' });
  }
});

test("firstPaymentRate pays a customer's first commissioned payment; the payments after it earn the plan's rate", async () => {
  const api = await program();
  const plan = await ok(
    api.post('/commission-plans', { name: 'Welcome', commissionType: 'PERCENTAGE', rate: 10, firstPaymentRate: 50, recurring: 'FOREVER' }),
  );
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  const customer = await customerOf(api, affiliate.id);
  const first = await sale(api, { referralId: customer.id, paymentTrigger: 'subscription_created' });
  const renewal = await sale(api, { referralId: customer.id, paymentTrigger: 'subscription_renewed' });
  const another = await sale(api, { referralId: (await customerOf(api, affiliate.id)).id });
  expect([first.commissionEarned, renewal.commissionEarned, another.commissionEarned]).toEqual([50, 10, 50]);
});

test('recurring ONCE pays the first payment only; renewals and paid invoices of the same customer earn nothing', async () => {
  const api = await program();
  const plan = await ok(api.post('/commission-plans', { name: 'Once', commissionType: 'PERCENTAGE', rate: 20, recurring: 'ONCE' }));
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  const customer = await customerOf(api, affiliate.id);
  const first = await sale(api, { referralId: customer.id, paymentTrigger: 'subscription_created', paidAt: daysAgo(60) });
  const renewal = await sale(api, { referralId: customer.id, paymentTrigger: 'subscription_renewed', paidAt: daysAgo(30) });
  const invoice = await sale(api, { referralId: customer.id, paymentTrigger: 'invoice_paid' });
  expect(first.commissionEarned).toBe(20);
  for (const recurring of [renewal, invoice]) expect(recurring).toMatchObject({ commissionEarned: 0, commissions: [] });
  // A new purchase of the same customer is not a renewal: it earns.
  expect((await sale(api, { referralId: customer.id, paymentTrigger: 'one_time' })).commissionEarned).toBe(20);
});

test('recurring LIMITED pays renewals within recurringMonths of the first payment and nothing after, by customerId too', async () => {
  const api = await program();
  const plan = await ok(
    api.post('/commission-plans', {
      name: 'Three months',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'LIMITED',
      recurringMonths: 3,
    }),
  );
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  const coupon = await ok(api.post('/coupons', { name: 'Ten off', percentOff: 10 }));
  const { code } = await ok(api.post('/promotional-codes', { couponId: coupon.id, code: 'LIMITED3', affiliateId: affiliate.id }));

  const months = (n: number) => daysAgo(150 - n * 30.5);
  const paid = async (month: number, trigger: string) =>
    (await sale(api, { promoCode: code, customerId: 'cus_limited', paymentTrigger: trigger, paidAt: months(month) })).commissionEarned;
  expect(await paid(0, 'subscription_created')).toBe(20);
  expect(await paid(1, 'subscription_renewed')).toBe(20);
  expect(await paid(2, 'invoice_paid')).toBe(20);
  expect(await paid(3.2, 'subscription_renewed')).toBe(0);
  expect(await paid(4, 'invoice_paid')).toBe(0);
});

test('recurring FOREVER pays every renewal, years after the first payment', async () => {
  const api = await program();
  const plan = await ok(api.post('/commission-plans', { name: 'Lifetime', commissionType: 'PERCENTAGE', rate: 15, recurring: 'FOREVER' }));
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  const customer = await customerOf(api, affiliate.id);
  await sale(api, { referralId: customer.id, paymentTrigger: 'subscription_created', paidAt: daysAgo(800) });
  for (const ago of [400, 30, 0]) {
    expect(
      (await sale(api, { referralId: customer.id, paymentTrigger: 'subscription_renewed', paidAt: daysAgo(ago) })).commissionEarned,
    ).toBe(15);
  }
});

test("reaching a tier's threshold promotes the affiliate with affiliate.updated, and later sales earn the tier's rate", async () => {
  const api = await program();
  const plan = await ok(
    api.post('/commission-plans', {
      name: 'Tiered',
      commissionType: 'PERCENTAGE',
      rate: 10,
      recurring: 'FOREVER',
      tiers: [
        { metric: 'SALES_COUNT', threshold: 2, rate: 20 },
        { metric: 'SALES_COUNT', threshold: 3, rate: 30 },
      ],
    }),
  );
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  const customer = await customerOf(api, affiliate.id);
  expect((await sale(api, { referralId: customer.id })).commissionEarned).toBe(10);
  expect((await sale(api, { referralId: customer.id })).commissionEarned).toBe(10);

  const tierOf = async () => (await ok(api.get(`/affiliates?id=${affiliate.id}`))).commissionTier;
  await eventually(async () => expect(await tierOf()).toEqual({ level: 1, metric: 'SALES_COUNT', threshold: 2, rate: 20 }), 20_000);
  await eventually(
    () => expect(eventsAbout('affiliate.updated', affiliate.id).map((data) => data.commissionTier?.level)).toContain(1),
    20_000,
  );
  expect((await sale(api, { referralId: customer.id })).commissionEarned).toBe(20);

  await eventually(() => {
    const promotion = eventsAbout('affiliate.updated', affiliate.id).find((data) => data.commissionTier?.level === 2);
    expect(promotion).toMatchObject({
      commissionPlan: { id: plan.id, name: 'Tiered' },
      commissionTier: { level: 2, metric: 'SALES_COUNT', threshold: 3, rate: 30 },
    });
  }, 20_000);
  expect((await tierOf())?.level).toBe(2);
  expect((await sale(api, { referralId: customer.id })).commissionEarned).toBe(30);
});

test('a REVENUE tier is reached by the total of the affiliate\u2019s sales', async () => {
  const api = await program();
  const plan = await ok(
    api.post('/commission-plans', {
      name: 'Revenue',
      commissionType: 'PERCENTAGE',
      rate: 5,
      recurring: 'FOREVER',
      tiers: [{ metric: 'REVENUE', threshold: 250, rate: 8 }],
    }),
  );
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  const customer = await customerOf(api, affiliate.id);
  await sale(api, { referralId: customer.id, totalEarned: 200 });
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect((await ok(api.get(`/affiliates?id=${affiliate.id}`))).commissionTier).toBeNull();
  await sale(api, { referralId: customer.id, totalEarned: 50 });
  await eventually(
    async () =>
      expect((await ok(api.get(`/affiliates?id=${affiliate.id}`))).commissionTier).toMatchObject({ metric: 'REVENUE', threshold: 250 }),
    20_000,
  );
  expect((await sale(api, { referralId: customer.id, totalEarned: 100 })).commissionEarned).toBe(8);
});

test('a commission is PENDING until the end of its hold (availableAt), then DUE; holdDays 0 makes it DUE at once', async () => {
  const api = await program();
  const held = await ok(
    api.post('/commission-plans', { name: 'Held', commissionType: 'PERCENTAGE', rate: 10, recurring: 'FOREVER', holdDays: 14 }),
  );
  const immediate = await ok(
    api.post('/commission-plans', { name: 'Immediate', commissionType: 'PERCENTAGE', rate: 10, recurring: 'FOREVER', holdDays: 0 }),
  );
  const onHold = await affiliateOn(api, { commissionPlanId: held.id });
  const paidAt = daysAgo(13);
  const recent = await sale(api, { referralId: (await customerOf(api, onHold.id)).id, paidAt });
  expect(recent.commissions[0]).toMatchObject({ status: 'PENDING', availableAt: new Date(Date.parse(paidAt) + 14 * DAY).toISOString() });
  const older = await sale(api, { referralId: (await customerOf(api, onHold.id)).id, paidAt: daysAgo(15) });
  expect(older.commissions[0].status).toBe('DUE');
  const atOnce = await affiliateOn(api, { commissionPlanId: immediate.id });
  expect((await sale(api, { referralId: (await customerOf(api, atOnce.id)).id })).commissions[0].status).toBe('DUE');
  const future = await api.post('/sales', {
    referralId: (await customerOf(api, atOnce.id)).id,
    totalEarned: 10,
    paidAt: new Date(Date.now() + 2 * DAY).toISOString(),
  });
  expect(future).toMatchObject({ status: 400, body: { error: 'paidAt: must not be in the future' } });
});

test('the default plan applies to affiliates without a plan of their own; without one, an affiliate earns its own commissionRate as before', async () => {
  const api = await program();
  const legacy = await affiliateOn(api, { commissionRate: 7 });
  expect(legacy).toMatchObject({ commissionPlan: null, commissionTier: null });
  expect((await sale(api, { referralId: (await customerOf(api, legacy.id)).id })).commissionEarned).toBe(7);

  const house = await ok(
    api.post('/commission-plans', { name: 'House', commissionType: 'PERCENTAGE', rate: 12, recurring: 'FOREVER', isDefault: true }),
  );
  expect(house.isDefault).toBe(true);
  expect((await ok(api.get(`/affiliates?id=${legacy.id}`))).commissionPlan).toEqual({ id: house.id, name: 'House' });
  expect((await sale(api, { referralId: (await customerOf(api, legacy.id)).id })).commissionEarned).toBe(12);

  const other = await ok(
    api.post('/commission-plans', { name: 'Other', commissionType: 'PERCENTAGE', rate: 3, recurring: 'FOREVER', isDefault: true }),
  );
  expect((await ok(api.get(`/commission-plans?id=${house.id}`))).isDefault).toBe(false);
  expect((await ok(api.get(`/commission-plans?id=${other.id}`))).isDefault).toBe(true);
});

test('reassigning a plan emits affiliate.updated with the new plan; changing a plan recalculates nothing already earned', async () => {
  const api = await program();
  const basic = await ok(api.post('/commission-plans', { name: 'Basic', commissionType: 'PERCENTAGE', rate: 10, recurring: 'FOREVER' }));
  const premium = await ok(
    api.post('/commission-plans', { name: 'Premium', commissionType: 'PERCENTAGE', rate: 30, recurring: 'FOREVER' }),
  );
  const affiliate = await affiliateOn(api, { commissionPlanId: basic.id });
  const customer = await customerOf(api, affiliate.id);
  const before = await sale(api, { referralId: customer.id });

  const moved = await ok(api.put('/affiliates', { affiliateId: affiliate.id, commissionPlanId: premium.id }));
  expect(moved.commissionPlan).toEqual({ id: premium.id, name: 'Premium' });
  await eventually(
    () => expect(eventsAbout('affiliate.updated', affiliate.id).map((data) => data.commissionPlan?.id)).toContain(premium.id),
    20_000,
  );

  const changed = await ok(api.put('/commission-plans', { commissionPlanId: premium.id, rate: 40, name: 'Premium+' }));
  expect(changed).toMatchObject({ rate: 40, name: 'Premium+' });
  expect((await sale(api, { referralId: customer.id })).commissionEarned).toBe(40);
  expect((await ok(api.get(`/sales?id=${before.id}`))).commissionEarned).toBe(10);
});

test('payout details are set by PUT /affiliates, emit affiliate.updated, and show the IBAN by its last four characters only', async () => {
  const api = await program();
  const affiliate = await affiliateOn(api);
  const details = { method: 'BANK_TRANSFER', accountHolder: 'Ada Byron', iban: 'DE89 3704 0044 0532 0130 00' };
  const updated = await ok(api.put('/affiliates', { affiliateId: affiliate.id, payoutDetails: details }));
  expect(updated.payoutDetails).toEqual({
    method: 'BANK_TRANSFER',
    email: null,
    accountHolder: 'Ada Byron',
    ibanLast4: '3000',
    note: null,
  });
  await eventually(
    () => expect(eventsAbout('affiliate.updated', affiliate.id).map((data) => data.payoutDetails?.ibanLast4)).toContain('3000'),
    20_000,
  );
  expect(JSON.stringify(world.subscriber.deliveries)).not.toContain('DE89370400440532013000');
  const refused = await api.put('/affiliates', { affiliateId: affiliate.id, payoutDetails: { method: 'PAYPAL' } });
  expect(refused).toMatchObject({ status: 400, body: { error: 'payoutDetails.email: is required for PAYPAL payouts' } });
});

test('a plan that breaks a rule is a 400 naming the field, and changes nothing', async () => {
  const api = await program();
  const cases: [Record<string, unknown>, string][] = [
    [{ commissionType: 'FLAT', rate: 5, recurring: 'ONCE' }, 'currency is required for a FLAT plan'],
    [
      { commissionType: 'PERCENTAGE', rate: 150, recurring: 'ONCE' },
      'rate: a PERCENTAGE rate (also firstPaymentRate and tier rates) is at most 100',
    ],
    [{ commissionType: 'PERCENTAGE', rate: 5, recurring: 'LIMITED' }, 'recurringMonths is required when recurring is LIMITED'],
    [
      {
        commissionType: 'PERCENTAGE',
        rate: 5,
        recurring: 'ONCE',
        tiers: [
          { metric: 'SALES_COUNT', threshold: 5, rate: 6 },
          { metric: 'SALES_COUNT', threshold: 5, rate: 7 },
        ],
      },
      'tiers.1.threshold: thresholds must increase from one tier to the next',
    ],
    [{ commissionType: 'PERCENTAGE', rate: 5, recurring: 'ONCE', holdDays: -1 }, 'holdDays: Number must be greater than or equal to 0'],
  ];
  for (const [body, error] of cases) {
    expect(await api.post('/commission-plans', { name: 'Bad', ...body })).toMatchObject({ status: 400, body: { error } });
  }
  const plan = await ok(api.post('/commission-plans', { name: 'Good', commissionType: 'PERCENTAGE', rate: 5, recurring: 'ONCE' }));
  expect(await api.put('/commission-plans', { commissionPlanId: plan.id, commissionType: 'FLAT' })).toMatchObject({
    status: 400,
    body: { error: 'currency is required for a FLAT plan' },
  });
  expect(await ok(api.get('/commission-plans'))).toEqual([expect.objectContaining({ id: plan.id, commissionType: 'PERCENTAGE' })]);
  expect(
    await api.post('/affiliates', { firstName: 'A', lastName: 'B', email: 'ab@example.com', commissionPlanId: randomUUID() }),
  ).toMatchObject({ status: 400 });
});

test('DELETE /commission-plans is refused while affiliates are on the plan, naming how many, and while it is the default', async () => {
  const api = await program();
  const plan = await ok(api.post('/commission-plans', { name: 'Busy', commissionType: 'PERCENTAGE', rate: 5, recurring: 'ONCE' }));
  const first = await affiliateOn(api, { commissionPlanId: plan.id });
  await affiliateOn(api, { commissionPlanId: plan.id });
  expect(await api.delete('/commission-plans', { commissionPlanId: plan.id })).toMatchObject({
    status: 400,
    body: { error: `Commission plan ${plan.id} cannot be deleted: 2 affiliates are on it; move them to another plan first` },
  });
  await ok(api.put('/affiliates', { affiliateId: first.id, commissionPlanId: null }));
  await ok(api.put('/commission-plans', { commissionPlanId: plan.id, isDefault: true }));
  expect((await api.delete('/commission-plans', { commissionPlanId: plan.id })).status).toBe(400);
  await ok(api.put('/commission-plans', { commissionPlanId: plan.id, isDefault: false }));
  const others = (await ok(api.get('/affiliates'))).filter((affiliate: { id: string }) => affiliate.id !== first.id);
  for (const other of others) await ok(api.put('/affiliates', { affiliateId: other.id, commissionPlanId: null }));
  expect(await ok(api.delete('/commission-plans', { commissionPlanId: plan.id }))).toEqual({ id: plan.id, deleted: true });
  expect((await api.get(`/commission-plans?id=${plan.id}`)).status).toBe(404);
});

test('affiliate.created expands commissionPlan and commissionTier; sale.created names the plan in force and the commission status', async () => {
  const api = await program();
  const plan = await ok(api.post('/commission-plans', { name: 'Expanded', commissionType: 'PERCENTAGE', rate: 10, recurring: 'FOREVER' }));
  const affiliate = await affiliateOn(api, { commissionPlanId: plan.id });
  await eventually(
    () =>
      expect(eventsAbout('affiliate.created', affiliate.id)[0]).toMatchObject({
        commissionPlan: { id: plan.id, name: 'Expanded' },
        commissionTier: null,
      }),
    20_000,
  );
  const recorded = await sale(api, { referralId: (await customerOf(api, affiliate.id)).id });
  await eventually(
    () =>
      expect(eventsAbout('sale.created', recorded.id)[0]).toMatchObject({
        commissionPlanId: plan.id,
        commissions: [{ status: 'PENDING', commissionPlanId: plan.id }],
      }),
    20_000,
  );
  // The expanded affiliate of sale.created is its public face: no payout details, no plan terms.
  expect(Object.keys(eventsAbout('sale.created', recorded.id)[0]?.affiliate ?? {}).sort()).toEqual([
    'commissionRate',
    'email',
    'firstName',
    'id',
    'lastName',
    'status',
  ]);
});
