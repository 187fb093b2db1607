import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { adminAuth, allUpstreams, bearer, createProgramWithKey, startEchoUpstream, startGateway, type EchoUpstream } from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  // No REDIS_URL: counters in memory.
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url), defaultRateLimit: { points: 5, duration: 60 } });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

const api = () => request(gateway.url);

test("the limit is announced as the current draft's RateLimit-Policy and RateLimit structured fields", async () => {
  const { key } = await createProgramWithKey(gateway);
  const first = await api().get('/api/v1/sales').set(bearer(key)).expect(200);
  expect(first.headers['ratelimit-policy']).toBe('"key-route";q=5;w=60');
  expect(first.headers.ratelimit).toMatch(/^"key-route";r=4;t=([1-9]|[1-5]\d|60)$/);
});

test('every proxied response carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset', async () => {
  const { key } = await createProgramWithKey(gateway);
  const remaining: number[] = [];
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const response = await api().get('/api/v1/coupons').set(bearer(key)).expect(200);
    expect(response.headers['ratelimit-limit']).toBe('5');
    expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(Number(response.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    remaining.push(Number(response.headers['ratelimit-remaining']));
  }
  expect(remaining).toEqual([4, 3, 2]);
  // Upstream errors are proxied responses too.
  upstream.answerWith(404);
  try {
    const response = await api().get('/api/v1/coupons').set(bearer(key)).expect(404);
    expect(response.headers['ratelimit-remaining']).toBe('1');
  } finally {
    upstream.answerWith(200);
  }
});

test('over the limit: 429 {error} with Retry-After, and the service is not called', async () => {
  const { key } = await createProgramWithKey(gateway);
  for (let attempt = 0; attempt < 5; attempt += 1) await api().post('/api/v1/sales').set(bearer(key)).send({}).expect(200);
  const before = upstream.received.length;
  const response = await api().post('/api/v1/sales').set(bearer(key)).send({}).expect(429);
  expect(response.body).toMatchObject({ error: expect.stringContaining('Rate limit exceeded') });
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(60);
  expect(response.headers['ratelimit-limit']).toBe('5');
  expect(response.headers['ratelimit-remaining']).toBe('0');
  expect(upstream.received.length).toBe(before);
});

test('limits are per key, per route and per method', async () => {
  const first = await createProgramWithKey(gateway);
  for (let attempt = 0; attempt < 5; attempt += 1) await api().get('/api/v1/affiliates').set(bearer(first.key)).expect(200);
  await api().get('/api/v1/affiliates').set(bearer(first.key)).expect(429);
  // Another method, another route, another key of the same program: each has its own budget.
  await api().post('/api/v1/affiliates').set(bearer(first.key)).send({}).expect(200);
  await api().get('/api/v1/links').set(bearer(first.key)).expect(200);
  const secondKey = await api().post(`/admin/v1/programs/${first.programId}/api-keys`).set(adminAuth).expect(200);
  await api().get('/api/v1/affiliates').set(bearer(secondKey.body.key)).expect(200);
});

test('a program can have its own limit instead of the default', async () => {
  const generous = await createProgramWithKey(gateway, { rateLimit: { points: 8, duration: 30 } });
  const response = await api().get('/api/v1/referrals').set(bearer(generous.key)).expect(200);
  expect(response.headers['ratelimit-limit']).toBe('8');
  for (let attempt = 0; attempt < 7; attempt += 1) await api().get('/api/v1/referrals').set(bearer(generous.key)).expect(200);
  const refused = await api().get('/api/v1/referrals').set(bearer(generous.key)).expect(429);
  expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(30);

  const strict = await createProgramWithKey(gateway);
  await api()
    .put(`/admin/v1/programs/${strict.programId}`)
    .set(adminAuth)
    .send({ rateLimit: { points: 1, duration: 60 } })
    .expect(200);
  await api().get('/api/v1/referrals').set(bearer(strict.key)).expect(200);
  await api().get('/api/v1/referrals').set(bearer(strict.key)).expect(429);
});
