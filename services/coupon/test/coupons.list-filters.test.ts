import { newProgramId, startCouponService, type Harness } from './coupon-service';

/**
 * The createdAt period on the coupon and promotional-code lists (gte included, lt excluded): the
 * creation times are set in the database to exact instants. A lookup by identifier answers one
 * object, so a period beside it is refused.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(() => harness.stop());

const at = (hour: string) => new Date(`2026-01-01T${hour}:00:00.000Z`);
const setCreatedAt = (collection: string, id: string, createdAt: Date) =>
  harness.coupon.context.connection.collection(collection).updateOne({ _id: id as never }, { $set: { createdAt } });
const ids = (body: { id: string }[]) => body.map((item) => item.id);

test('GET /coupons and GET /promotional-codes list only what was created within a createdAt period', async () => {
  const api = harness.api(newProgramId());
  const early = (await api.post('/coupons', { name: 'Early', percentOff: 10 }).expect(200)).body;
  const late = (await api.post('/coupons', { name: 'Late', percentOff: 20 }).expect(200)).body;
  const earlyCode = (await api.post('/promotional-codes', { couponId: early.id, code: 'EARLY10' }).expect(200)).body;
  const lateCode = (await api.post('/promotional-codes', { couponId: early.id, code: 'LATE10' }).expect(200)).body;
  await setCreatedAt('coupons', early.id, at('10'));
  await setCreatedAt('coupons', late.id, at('11'));
  await setCreatedAt('promotional_codes', earlyCode.id, at('10'));
  await setCreatedAt('promotional_codes', lateCode.id, at('11'));

  const period = { 'createdAt[gte]': at('10').toISOString(), 'createdAt[lt]': at('11').toISOString() };
  expect(ids((await api.get('/coupons', period).expect(200)).body)).toEqual([early.id]);
  expect(ids((await api.get('/coupons', { 'createdAt[gte]': at('11').toISOString() }).expect(200)).body)).toEqual([late.id]);
  expect(ids((await api.get('/promotional-codes', { ...period, couponId: early.id }).expect(200)).body)).toEqual([earlyCode.id]);
  expect(ids((await api.get('/promotional-codes', { 'createdAt[gte]': at('11').toISOString() }).expect(200)).body)).toEqual([lateCode.id]);

  const refused = await api.get('/coupons', { id: early.id, ...period }).expect(400);
  expect(refused.body.error).toBe('createdAt[gte] applies to the list: it does not combine with id, name or externalId');
  expect((await api.get('/promotional-codes', { code: 'EARLY10', ...period }).expect(400)).body.error).toBe(
    'createdAt[gte] applies to the list: it does not combine with id, code or externalId',
  );
});
