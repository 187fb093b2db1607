import { bootService, type RunningService } from '@affiliate/platform';
import { eventually, testServiceSettings, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildAffiliateService } from '../../services/affiliate/src/service';
import { buildCouponService } from '../../services/coupon/src/service';
import type { RunningGateway } from '../src/gateway';
import { adminAuth, bearer, createProgramWithKey, DEAD_UPSTREAM, startGateway, type ProgramWithKey } from './support';

let affiliate: RunningService;
let coupon: RunningService;
let gateway: RunningGateway;
let programA: ProgramWithKey;
let programB: ProgramWithKey;

beforeAll(async () => {
  // One exchange for all three, so the services receive the gateway's program events.
  const exchange = uniqueName('test_events');
  affiliate = await bootService(testServiceSettings('affiliate', { exchange }), (context) => buildAffiliateService(context));
  coupon = await bootService(testServiceSettings('coupon', { exchange }), (context) =>
    buildCouponService(context, { affiliateUrl: affiliate.url }),
  );
  gateway = await startGateway({
    exchange,
    upstreams: {
      coupon: coupon.url,
      affiliate: affiliate.url,
      referral: DEAD_UPSTREAM,
      sale: DEAD_UPSTREAM,
      'webhook-dispatcher': DEAD_UPSTREAM,
    },
  });
  programA = await createProgramWithKey(gateway, { defaultCommissionRate: 33 });
  programB = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await coupon.stop();
  await affiliate.stop();
});

const as = (program: ProgramWithKey) => ({
  get: (path: string) => request(gateway.url).get(`/api/v1${path}`).set(bearer(program.key)),
  post: (path: string, body: object) => request(gateway.url).post(`/api/v1${path}`).set(bearer(program.key)).send(body),
  put: (path: string, body: object) => request(gateway.url).put(`/api/v1${path}`).set(bearer(program.key)).send(body),
  delete: (path: string, body: object) => request(gateway.url).delete(`/api/v1${path}`).set(bearer(program.key)).send(body),
});

test("one program's coupons and codes are invisible and untouchable with another program's key", async () => {
  const created = await as(programA).post('/coupons', { name: 'A only', percentOff: 10 }).expect(200);
  const couponId = created.body.id as string;
  expect(created.body.affiliateProgramId).toBe(programA.programId);
  await as(programA).post('/promotional-codes', { couponId, code: 'AONLY10' }).expect(200);

  await as(programB).get(`/coupons?id=${couponId}`).expect(404);
  expect((await as(programB).get('/coupons').expect(200)).body).toEqual([]);
  await as(programB).get('/promotional-codes?code=AONLY10').expect(404);
  await as(programB).put('/coupons', { couponId, name: 'hijacked' }).expect(404);
  const deletion = await as(programB).delete('/coupons', { couponId }).expect(404);
  expect(deletion.body).toMatchObject({ error: 404, message: expect.any(String) });
  await as(programB).post('/promotional-codes', { couponId, code: 'BSTEAL' }).expect(404);

  const stillThere = await as(programA).get(`/coupons?id=${couponId}`).expect(200);
  expect(stillThere.body.name).toBe('A only');
  // The same code string is free in another program.
  const own = await as(programB).post('/coupons', { name: 'B', percentOff: 5 }).expect(200);
  await as(programB).post('/promotional-codes', { couponId: own.body.id, code: 'AONLY10' }).expect(200);
});

test("one program's affiliates and links are invisible with another program's key", async () => {
  const created = await as(programA)
    .post('/affiliates', { firstName: 'Ann', lastName: 'A', email: 'ann@a.example', affiliateLink: 'ann-a' })
    .expect(200);
  await as(programB).get(`/affiliates?id=${created.body.id}`).expect(200, 'null');
  await as(programB).get('/affiliates?email=ann@a.example').expect(200, 'null');
  expect((await as(programB).get('/affiliates').expect(200)).body).toEqual([]);
  expect((await as(programB).get('/links?link=ann-a').expect(200)).body).toEqual([]);
  await as(programB).put('/affiliates', { affiliateId: created.body.id, affiliateLink: 'stolen' }).expect(404);
  // The slug is free in program B.
  await as(programB).post('/affiliates', { firstName: 'Bob', lastName: 'B', email: 'ann@a.example', affiliateLink: 'ann-a' }).expect(200);
});

test('the services see program settings from the gateway events (default commission)', async () => {
  await eventually(async () => {
    const created = await as(programA)
      .post('/affiliates', { firstName: 'Cy', lastName: 'C', email: `cy${Date.now()}@a.example` })
      .expect(200);
    expect(created.body.commissionRate).toBe(33);
  });
  await request(gateway.url).put(`/admin/v1/programs/${programA.programId}`).set(adminAuth).send({ defaultCommissionRate: 12 }).expect(200);
  await eventually(async () => {
    const created = await as(programA)
      .post('/affiliates', { firstName: 'Di', lastName: 'D', email: `di${Date.now()}@a.example` })
      .expect(200);
    expect(created.body.commissionRate).toBe(12);
  });
});

test("the services' internal routes are not reachable through the gateway", async () => {
  await as(programA).get('/internal/affiliates').expect(404);
  await as(programA).post('/internal/redemptions', {}).expect(404);
});

test('an idempotent POST /coupons retried creates one coupon; the same key with another body is 409', async () => {
  const body = { name: 'Idempotent', percentOff: 15 };
  const first = await as(programB).post('/coupons', body).set('Idempotency-Key', 'coupon-create-1').expect(200);
  const retry = await as(programB).post('/coupons', body).set('Idempotency-Key', 'coupon-create-1').expect(200);
  expect(retry.body).toEqual(first.body);
  const named = (await as(programB).get('/coupons').expect(200)).body.filter(
    (candidate: { name: string }) => candidate.name === 'Idempotent',
  );
  expect(named).toHaveLength(1);
  await as(programB)
    .post('/coupons', { ...body, percentOff: 20 })
    .set('Idempotency-Key', 'coupon-create-1')
    .expect(409);
  // Program A has its own key space.
  const other = await as(programA).post('/coupons', body).set('Idempotency-Key', 'coupon-create-1').expect(200);
  expect(other.body.id).not.toBe(first.body.id);
});
