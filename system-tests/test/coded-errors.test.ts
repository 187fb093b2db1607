import { randomUUID } from 'node:crypto';
import { apiClient, System, type Api, type ApiResponse } from '../harness';

// Every answer of these tests also passes the contract check (harness.ts): a code outside the
// catalogue, or a requestId other than the header, fails them before the assertions below.
let system: System;
let programId: string;
let api: Api;

beforeAll(async () => {
  system = await System.start();
  ({ programId, api } = await system.createProgram({ rateLimit: { points: 10_000, duration: 1 } }));
}, 180_000);
afterAll(async () => {
  await system?.stop();
});

/** The code, param and requestId an error answer carries, with the header its requestId must equal. */
const codedError = (answer: ApiResponse) => ({
  status: answer.status,
  code: answer.body.code,
  param: answer.body.param,
  requestIdIsTheHeader:
    answer.body.requestId === answer.headers.get('x-request-id') &&
    typeof answer.body.requestId === 'string' &&
    answer.body.requestId.length > 0,
});

test("a validation error names its catalogued code and the field at fault, and keeps the specification's message", async () => {
  const missing = await api.post('/affiliates', { lastName: 'Lovelace', email: 'ada@example.com' });
  expect(missing.body.error).toBe('firstName is required');
  expect(codedError(missing)).toEqual({ status: 400, code: 'parameter_missing', param: 'firstName', requestIdIsTheHeader: true });

  const unknown = await api.post('/affiliates', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', admin: true });
  expect(codedError(unknown)).toEqual({ status: 400, code: 'parameter_unknown', param: 'admin', requestIdIsTheHeader: true });

  // A schema's own rule about a missing field is parameter_missing too.
  const ruled = await api.post('/coupons', { name: 'Half' });
  expect(ruled.body.error).toBe('percentOff is required when couponType is PERCENTAGE');
  expect(codedError(ruled)).toEqual({ status: 400, code: 'parameter_missing', param: 'percentOff', requestIdIsTheHeader: true });

  const invalid = await api.post('/coupons', { name: 'Half', percentOff: 150 });
  expect(codedError(invalid)).toEqual({ status: 400, code: 'parameter_invalid', param: 'percentOff', requestIdIsTheHeader: true });
}, 60_000);

test('a domain refusal has its own code: a duplicate email is email_taken on email, a code in use is code_taken', async () => {
  const person = { firstName: 'Grace', lastName: 'Hopper', email: `grace-${randomUUID().slice(0, 8)}@example.com` };
  expect((await api.post('/affiliates', person)).status).toBe(200);
  const again = await api.post('/affiliates', person);
  expect(again.body.error).toBe(`email: an affiliate with email ${person.email} already exists in this program`);
  expect(codedError(again)).toEqual({ status: 400, code: 'email_taken', param: 'email', requestIdIsTheHeader: true });

  const coupon = (await api.post('/coupons', { name: 'Tenth', percentOff: 10 })).body;
  expect((await api.post('/promotional-codes', { couponId: coupon.id, code: 'CODED10' })).status).toBe(200);
  const taken = await api.post('/promotional-codes', { couponId: coupon.id, code: 'CODED10' });
  expect(codedError(taken)).toEqual({ status: 400, code: 'code_taken', param: 'code', requestIdIsTheHeader: true });
}, 60_000);

test('a missing object is resource_missing, in the numbered shape too (DELETE /coupons keeps {error: 404, message})', async () => {
  const lookup = await api.get(`/coupons?id=${randomUUID()}`);
  expect(codedError(lookup)).toEqual({ status: 404, code: 'resource_missing', param: undefined, requestIdIsTheHeader: true });
  const deletion = await api.delete('/coupons', { couponId: randomUUID() });
  expect(deletion.body).toMatchObject({ error: 404, message: expect.stringMatching(/not found/) });
  expect(codedError(deletion)).toEqual({ status: 404, code: 'resource_missing', param: undefined, requestIdIsTheHeader: true });
  const route = await api.get('/invoices');
  expect(codedError(route)).toEqual({ status: 404, code: 'route_missing', param: undefined, requestIdIsTheHeader: true });
}, 60_000);

test('credentials: no key is unauthenticated, an unknown key api_key_invalid, a key without the scope scope_missing', async () => {
  const gateway = `${system.gatewayUrl}/api/v1`;
  expect(codedError(await apiClient(gateway, undefined).get('/coupons'))).toEqual({
    status: 401,
    code: 'unauthenticated',
    param: undefined,
    requestIdIsTheHeader: true,
  });
  expect(codedError(await apiClient(gateway, `sk_${randomUUID()}`).get('/coupons'))).toEqual({
    status: 401,
    code: 'api_key_invalid',
    param: undefined,
    requestIdIsTheHeader: true,
  });
  const readOnly = await system.admin().post(`/admin/v1/programs/${programId}/api-keys`, { scopes: ['read'] });
  const refused = await apiClient(gateway, readOnly.body.key).post('/coupons', { name: 'Nope', percentOff: 5 });
  expect(refused.body.error).toMatch(/lacks the "write" scope/);
  expect(codedError(refused)).toEqual({ status: 403, code: 'scope_missing', param: undefined, requestIdIsTheHeader: true });
}, 60_000);

test('a body that is not JSON is unsupported_media_type (415); an unreadable one body_malformed (400)', async () => {
  const text = await api.request('POST', '/coupons', 'name=Plain', { 'content-type': 'text/plain' });
  expect(codedError(text)).toEqual({ status: 415, code: 'unsupported_media_type', param: undefined, requestIdIsTheHeader: true });
  const broken = await api.request('POST', '/coupons', '{"name": ', { 'content-type': 'application/json' });
  expect(codedError(broken)).toEqual({ status: 400, code: 'body_malformed', param: undefined, requestIdIsTheHeader: true });
}, 60_000);

test("an Idempotency-Key reused with another request is idempotency_key_reused; a replayed error names the replay's request id", async () => {
  const key = randomUUID();
  expect((await api.post('/coupons', { name: 'Once', percentOff: 5 }, { 'idempotency-key': key })).status).toBe(200);
  const reused = await api.post('/coupons', { name: 'Twice', percentOff: 5 }, { 'idempotency-key': key });
  expect(codedError(reused)).toEqual({ status: 409, code: 'idempotency_key_reused', param: undefined, requestIdIsTheHeader: true });

  // A 404 is kept for replay: the replay is the same refusal, under the request id of its own answer.
  const deletion = { couponId: randomUUID() };
  const deleteKey = randomUUID();
  const first = await api.request('DELETE', '/coupons', deletion, { 'idempotency-key': deleteKey });
  const replay = await api.request('DELETE', '/coupons', deletion, { 'idempotency-key': deleteKey });
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(codedError(replay)).toEqual({ status: 404, code: 'resource_missing', param: undefined, requestIdIsTheHeader: true });
  expect(replay.body.requestId).not.toBe(first.body.requestId);
  expect(replay.body.message).toBe(first.body.message);
}, 60_000);

test('a client that chose its X-Request-Id finds it in the error body of a refusal a service made', async () => {
  const requestId = `support-${randomUUID()}`;
  const answer = await api.request('GET', `/referrals?id=${randomUUID()}`, undefined, { 'x-request-id': requestId });
  expect(answer.headers.get('x-request-id')).toBe(requestId);
  expect(answer.body).toMatchObject({ code: 'resource_missing', requestId });
}, 60_000);

test('a spent rate limit is rate_limited (429)', async () => {
  const limited = await system.createProgram({ rateLimit: { points: 1, duration: 60 } });
  expect((await limited.api.get('/coupons?name=none')).status).not.toBe(429);
  const refused = await limited.api.get('/coupons?name=none');
  expect(codedError(refused)).toEqual({ status: 429, code: 'rate_limited', param: undefined, requestIdIsTheHeader: true });
}, 60_000);

test('a service that cannot be reached is service_unavailable (503) with Retry-After', async () => {
  await system.kill('referral', 'SIGKILL');
  try {
    const answer = await api.get(`/referrals?id=${randomUUID()}`);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(codedError(answer)).toEqual({ status: 503, code: 'service_unavailable', param: undefined, requestIdIsTheHeader: true });
  } finally {
    await system.launch('referral');
    await system.waitReady('referral');
  }
}, 180_000);
