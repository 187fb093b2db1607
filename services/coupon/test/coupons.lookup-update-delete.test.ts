import { Coupon, DeleteCouponResponse, NumberedErrorBody } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import { eventsOf, newProgramId, percentCoupon, startCouponService, type Harness } from './coupon-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(async () => {
  await harness.stop();
});

test('finds one coupon by id, by externalId and by name (the newest), with its promotionalCodes; 404 {error} when none matches', async () => {
  const api = harness.api(newProgramId());
  const older = await api.post('/coupons', { name: 'Same', percentOff: 10, externalId: 'x-1' }).expect(200);
  const newer = await api.post('/coupons', { name: 'Same', percentOff: 20 }).expect(200);
  await api.post('/promotional-codes', { couponId: older.body.id, code: 'OLDER' }).expect(200);

  const byId = await api.get('/coupons', { id: older.body.id }).expect(200);
  expect(Coupon.parse(byId.body).promotionalCodes.map((code) => code.code)).toEqual(['OLDER']);
  expect((await api.get('/coupons', { externalId: 'x-1' })).body.id).toBe(older.body.id);
  expect((await api.get('/coupons', { name: 'Same' })).body.id).toBe(newer.body.id);

  const missing = await api.get('/coupons', { name: 'Nope' });
  expect(missing.status).toBe(404);
  expect(missing.body).toMatchObject({ error: 'No coupon with name "Nope" in this program' });
});

test('lists every coupon newest first with promotionalCodes, paged by limit and startingAfter with a Link header', async () => {
  const api = harness.api(newProgramId());
  const ids: string[] = [];
  for (let index = 0; index < 3; index += 1)
    ids.push((await api.post('/coupons', { name: `C${index}`, percentOff: 10 }).expect(200)).body.id);
  const all = await api.get('/coupons').expect(200);
  expect(all.body.map((coupon: Coupon) => coupon.id)).toEqual([...ids].reverse());
  all.body.forEach((coupon: unknown) => Coupon.parse(coupon));

  const first = await api.get('/coupons', { limit: '2' }).expect(200);
  expect(first.body.map((coupon: Coupon) => coupon.id)).toEqual([ids[2], ids[1]]);
  expect(first.headers.link).toBe(`</coupons?limit=2&startingAfter=${ids[1]}>; rel="next"`);
  const second = await api.get('/coupons', { limit: '2', startingAfter: ids[1] as string }).expect(200);
  expect(second.body.map((coupon: Coupon) => coupon.id)).toEqual([ids[0]]);
  expect(second.headers.link).toBeUndefined();
});

test("keeps each program's coupons out of every other program's reach", async () => {
  const owner = harness.api(newProgramId());
  const stranger = harness.api(newProgramId());
  const coupon = await owner.post('/coupons', { ...percentCoupon, externalId: 'mine' }).expect(200);
  expect((await stranger.get('/coupons')).body).toEqual([]);
  expect((await stranger.get('/coupons', { id: coupon.body.id })).status).toBe(404);
  expect((await stranger.get('/coupons', { externalId: 'mine' })).status).toBe(404);
  expect((await stranger.put('/coupons', { couponId: coupon.body.id, name: 'stolen' })).status).toBe(404);
  expect((await stranger.delete('/coupons', { couponId: coupon.body.id })).status).toBe(404);
  expect((await stranger.post('/promotional-codes', { couponId: coupon.body.id, code: 'THEIRS' })).status).toBe(404);
  expect((await owner.get('/coupons', { id: coupon.body.id })).body.name).toBe(percentCoupon.name);
});

test('updates name, valid, redeemBy, maxRedemptions, products, collections, externalId and metadata, and emits coupon.updated with the codes', async () => {
  const api = harness.api(newProgramId());
  const coupon = await api.post('/coupons', percentCoupon).expect(200);
  await api.post('/promotional-codes', { couponId: coupon.body.id, code: 'UPD' }).expect(200);
  const change = {
    name: 'Winter',
    valid: false,
    redeemBy: '2031-05-01T10:00:00.000Z',
    maxRedemptions: 7,
    productIds: ['p1'],
    limitToProducts: true,
    collectionIds: ['c1'],
    externalId: 'ext-upd',
    metadata: { campaign: 'q4' },
  };
  const updated = await api.put('/coupons', { couponId: coupon.body.id, ...change });
  expect(updated.status).toBe(200);
  expect(Coupon.parse(updated.body)).toMatchObject({ ...change, percentOff: 20 });
  expect(updated.body.promotionalCodes).toHaveLength(1);
  expect(Date.parse(updated.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(coupon.body.updatedAt));
  const [event] = await eventually(() => {
    const events = eventsOf(harness, 'coupon.updated', coupon.body.id);
    expect(events).toHaveLength(1);
    return events;
  });
  expect(event?.data).toEqual(updated.body);
  expect((await api.put('/coupons', { couponId: coupon.body.id, externalId: null })).body.externalId).toBeNull();
});

test('refuses to change the discount of a coupon', async () => {
  const api = harness.api(newProgramId());
  const coupon = await api.post('/coupons', percentCoupon).expect(200);
  const response = await api.put('/coupons', { couponId: coupon.body.id, percentOff: 50 });
  expect(response.status).toBe(400);
  expect(response.body.error).toMatch(/^percentOff cannot be changed/);
  expect((await api.get('/coupons', { id: coupon.body.id })).body.percentOff).toBe(20);
});

test('rejects a coupon update that reuses another coupon’s externalId', async () => {
  const api = harness.api(newProgramId());
  await api.post('/coupons', { ...percentCoupon, externalId: 'taken' }).expect(200);
  const other = await api.post('/coupons', percentCoupon).expect(200);
  const response = await api.put('/coupons', { couponId: other.body.id, externalId: 'taken' });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ error: 'A coupon with externalId "taken" already exists in this program' });
});

test('deletes a coupon with all its codes: {message, deletedCoupon}, coupon.deleted and promocode.deleted carry {id} only', async () => {
  const api = harness.api(newProgramId());
  const coupon = await api.post('/coupons', percentCoupon).expect(200);
  const codes: { id: string }[] = [];
  for (const code of ['DEL-A', 'DEL-B'])
    codes.push((await api.post('/promotional-codes', { couponId: coupon.body.id, code }).expect(200)).body);
  const response = await api.delete('/coupons', { couponId: coupon.body.id });
  expect(response.status).toBe(200);
  expect(DeleteCouponResponse.parse(response.body)).toEqual({
    message: expect.any(String),
    deletedCoupon: { id: coupon.body.id, name: percentCoupon.name },
  });
  expect((await api.get('/coupons', { id: coupon.body.id })).status).toBe(404);
  expect((await api.get('/promotional-codes', { couponId: coupon.body.id })).body).toEqual([]);
  await eventually(() => {
    expect(eventsOf(harness, 'coupon.deleted', coupon.body.id).map((event) => event.data)).toEqual([{ id: coupon.body.id }]);
    for (const code of codes) expect(eventsOf(harness, 'promocode.deleted', code.id).map((event) => event.data)).toEqual([{ id: code.id }]);
  });
  // The code strings are free again at once.
  const again = await api.post('/coupons', percentCoupon).expect(200);
  await api.post('/promotional-codes', { couponId: again.body.id, code: 'del-a' }).expect(200);
});

test('answers DELETE /coupons errors as {error: <status number>, message}', async () => {
  const api = harness.api(newProgramId());
  const unknown = await api.delete('/coupons', { couponId: '1b4e28ba-2fa1-41d2-883f-0016d3cca427' });
  expect(unknown.status).toBe(404);
  expect(NumberedErrorBody.strict().parse(unknown.body)).toMatchObject({ error: 404, message: expect.stringMatching(/not found/) });
  const invalid = await api.delete('/coupons', { couponId: 'not-a-uuid' });
  expect(invalid.status).toBe(400);
  expect(NumberedErrorBody.strict().parse(invalid.body)).toMatchObject({ error: 400, message: expect.stringMatching(/^couponId/) });
});
