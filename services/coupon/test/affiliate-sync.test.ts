import { eventually } from '@affiliate/platform/testing';
import { eventsOf, newProgramId, percentCoupon, startCouponService, type Harness } from './coupon-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(async () => {
  await harness.stop();
});

async function assignedCode(programId: string, code: string) {
  const api = harness.api(programId);
  const affiliate = await harness.createAffiliate(programId, { firstName: 'Old', lastName: 'Name' });
  const coupon = await api.post('/coupons', percentCoupon).expect(200);
  const created = await api.post('/promotional-codes', { couponId: coupon.body.id, code, affiliateId: affiliate.id }).expect(200);
  return { api, affiliate, code: created.body };
}

test('affiliate.updated keeps the affiliate summary embedded in its codes current and emits promocode.updated', async () => {
  const programId = newProgramId();
  const { api, affiliate, code } = await assignedCode(programId, 'SYNC');
  const email = `renamed.${affiliate.id.slice(0, 8)}@example.com`;
  await harness.affiliateApi(programId).put('/affiliates', { affiliateId: affiliate.id, firstName: 'New', email }).expect(200);
  await eventually(async () => {
    const refreshed = await api.get('/promotional-codes', { id: code.id }).expect(200);
    expect(refreshed.body.affiliate).toEqual({ id: affiliate.id, firstName: 'New', lastName: 'Name', email });
  });
  expect((await api.get('/promotional-codes', { affiliateEmail: email })).body.map((found: { id: string }) => found.id)).toEqual([code.id]);
  await eventually(() =>
    expect(eventsOf(harness, 'promocode.updated', code.id).at(-1)?.data.affiliate).toMatchObject({ firstName: 'New' }),
  );
});

test('affiliate.deleted unassigns its codes, each emitting promocode.updated', async () => {
  const programId = newProgramId();
  const { api, affiliate, code } = await assignedCode(programId, 'ORPHAN');
  await harness.affiliateApi(programId).delete('/affiliates', { affiliateId: affiliate.id }).expect(200);
  await eventually(async () => {
    const unassigned = await api.get('/promotional-codes', { id: code.id }).expect(200);
    expect(unassigned.body).toMatchObject({ affiliateId: null, affiliate: null });
  });
  await eventually(() =>
    expect(eventsOf(harness, 'promocode.updated', code.id).at(-1)?.data).toMatchObject({ affiliateId: null, affiliate: null }),
  );
  const reassign = await api.put('/promotional-codes', { promotionalCodeId: code.id, affiliateId: affiliate.id });
  expect(reassign.status).toBe(404);
});
