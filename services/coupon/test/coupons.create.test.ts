import { Coupon } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import { eventsOf, newProgramId, startCouponService, type Harness } from './coupon-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(async () => {
  await harness.stop();
});

test('creates a coupon with every field of the Coupon table, nullable ones as null, and the defaults', async () => {
  const programId = newProgramId();
  const response = await harness.api(programId).post('/coupons', { name: 'Summer', percentOff: 20 });
  expect(response.status).toBe(200);
  const coupon = Coupon.strict().parse(response.body);
  expect(coupon).toEqual({
    id: expect.any(String),
    name: 'Summer',
    externalId: null,
    couponType: 'PERCENTAGE',
    percentOff: 20,
    amountOff: null,
    currency: null,
    duration: 'forever',
    durationInMonths: null,
    maxRedemptions: null,
    timesRedeemed: 0,
    couponCategory: 'CUSTOMER',
    limitToProducts: false,
    productIds: [],
    collectionIds: [],
    valid: true,
    redeemBy: null,
    integrationType: 'NONE',
    affiliateProgramId: programId,
    metadata: {},
    createdAt: expect.any(String),
    updatedAt: coupon.createdAt,
    promotionalCodes: [],
    autoCouponRule: null,
  });
});

test('stores a FLAT repeating coupon with its amount rounded to cents and its currency upper case', async () => {
  const response = await harness.api(newProgramId()).post('/coupons', {
    name: 'Ten off',
    couponType: 'FLAT',
    amountOff: 10.005,
    currency: 'usd',
    duration: 'repeating',
    durationInMonths: 3,
    maxRedemptions: 5,
    redeemBy: '2030-01-01T00:00:00Z',
    externalId: 'stripe_123',
    integrationType: 'STRIPE',
    couponCategory: 'PAYOUT',
    limitToProducts: true,
    productIds: ['prod_1'],
  });
  expect(response.status).toBe(200);
  expect(Coupon.parse(response.body)).toMatchObject({
    couponType: 'FLAT',
    amountOff: 10.01,
    currency: 'USD',
    percentOff: null,
    duration: 'repeating',
    durationInMonths: 3,
    maxRedemptions: 5,
    redeemBy: '2030-01-01T00:00:00.000Z',
    externalId: 'stripe_123',
    integrationType: 'STRIPE',
    couponCategory: 'PAYOUT',
    limitToProducts: true,
    productIds: ['prod_1'],
  });
});

test('money is stored as integer minor units of its currency and shown as a decimal amount', async () => {
  const api = harness.api(newProgramId());
  const dollars = await api.post('/coupons', { name: 'Cents', couponType: 'FLAT', amountOff: 10.005, currency: 'USD' });
  const yen = await api.post('/coupons', { name: 'Yen', couponType: 'FLAT', amountOff: 500.4, currency: 'JPY' });
  expect([dollars.body.amountOff, yen.body.amountOff]).toEqual([10.01, 500]);
  const stored = await harness.coupon.context.connection
    .collection('coupons')
    .find({ _id: { $in: [dollars.body.id, yen.body.id] } as never })
    .toArray();
  expect(stored.map((coupon) => coupon.amountOffMinor).sort((a, b) => a - b)).toEqual([500, 1001]);
});

test('a FLAT amount that rounds to nothing in its currency is refused, never stored as 0', async () => {
  const api = harness.api(newProgramId());
  for (const [amountOff, currency] of [
    [1e-320, 'USD'],
    [0.004, 'USD'],
    [0.4, 'JPY'],
  ] as const) {
    const response = await api.post('/coupons', { name: 'Nothing off', couponType: 'FLAT', amountOff, currency });
    expect({ amountOff, currency, status: response.status, error: response.body.error }).toEqual({
      amountOff,
      currency,
      status: 400,
      error: expect.stringMatching(/^amountOff: .* is less than the smallest unit/),
    });
  }
  expect((await api.get('/coupons')).body).toEqual([]);
});

test('rejects a coupon without name', async () => {
  const response = await harness.api(newProgramId()).post('/coupons', { percentOff: 20 });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ error: 'name is required' });
});

test('rejects a PERCENTAGE coupon without percentOff, also when couponType is omitted', async () => {
  const api = harness.api(newProgramId());
  for (const body of [{ name: 'A' }, { name: 'A', couponType: 'PERCENTAGE' }]) {
    const response = await api.post('/coupons', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'percentOff is required when couponType is PERCENTAGE' });
  }
});

test('rejects percentOff outside 1 to 100', async () => {
  const api = harness.api(newProgramId());
  for (const percentOff of [0, 0.99, 100.01, 101, -5]) {
    const response = await api.post('/coupons', { name: 'A', percentOff });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'percentOff must be between 1 and 100' });
  }
  expect((await api.post('/coupons', { name: 'A', percentOff: 1 })).status).toBe(200);
  expect((await api.post('/coupons', { name: 'A', percentOff: 100 })).status).toBe(200);
});

test('rejects a FLAT coupon without amountOff or without currency', async () => {
  const api = harness.api(newProgramId());
  const noAmount = await api.post('/coupons', { name: 'A', couponType: 'FLAT', currency: 'USD' });
  expect(noAmount.status).toBe(400);
  expect(noAmount.body).toMatchObject({ error: 'amountOff is required when couponType is FLAT' });
  const noCurrency = await api.post('/coupons', { name: 'A', couponType: 'FLAT', amountOff: 5 });
  expect(noCurrency.status).toBe(400);
  expect(noCurrency.body).toMatchObject({ error: 'currency is required when couponType is FLAT' });
});

test('rejects a repeating coupon without durationInMonths', async () => {
  const response = await harness.api(newProgramId()).post('/coupons', { name: 'A', percentOff: 10, duration: 'repeating' });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ error: 'durationInMonths is required when duration is repeating' });
});

test('rejects discount fields of the other kind instead of storing them', async () => {
  const api = harness.api(newProgramId());
  const amountOnPercentage = await api.post('/coupons', { name: 'A', percentOff: 10, amountOff: 5 });
  expect(amountOnPercentage.status).toBe(400);
  expect(amountOnPercentage.body.error).toMatch(/amountOff and currency are only used when couponType is FLAT/);
  const monthsOnForever = await api.post('/coupons', { name: 'A', percentOff: 10, durationInMonths: 2 });
  expect(monthsOnForever.status).toBe(400);
  expect(monthsOnForever.body.error).toMatch(/durationInMonths is only used when duration is repeating/);
});

test('rejects a second coupon with the same externalId in the program, not in another program, and allows many without one', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  await api.post('/coupons', { name: 'A', percentOff: 10, externalId: 'ext-1' }).expect(200);
  const duplicate = await api.post('/coupons', { name: 'B', percentOff: 10, externalId: 'ext-1' });
  expect(duplicate.status).toBe(400);
  expect(duplicate.body).toMatchObject({ error: 'A coupon with externalId "ext-1" already exists in this program' });
  await harness.api(newProgramId()).post('/coupons', { name: 'B', percentOff: 10, externalId: 'ext-1' }).expect(200);
  for (let index = 0; index < 3; index += 1) {
    await api.post('/coupons', { name: `none ${index}`, percentOff: 10 }).expect(200);
    await api.post('/coupons', { name: `null ${index}`, percentOff: 10, externalId: null }).expect(200);
  }
  expect((await api.get('/coupons')).body).toHaveLength(7);
});

test('frees the externalId of a deleted coupon at once', async () => {
  const api = harness.api(newProgramId());
  const first = await api.post('/coupons', { name: 'A', percentOff: 10, externalId: 'ext-again' }).expect(200);
  await api.delete('/coupons', { couponId: first.body.id }).expect(200);
  await api.post('/coupons', { name: 'A', percentOff: 10, externalId: 'ext-again' }).expect(200);
});

test('emits coupon.created with the coupon and its promotionalCodes', async () => {
  const programId = newProgramId();
  const created = await harness.api(programId).post('/coupons', { name: 'Evented', percentOff: 15 }).expect(200);
  const [event] = await eventually(() => {
    const events = eventsOf(harness, 'coupon.created', created.body.id);
    expect(events).toHaveLength(1);
    return events;
  });
  expect(event?.programId).toBe(programId);
  expect(Coupon.parse(event?.data)).toEqual(created.body);
});
