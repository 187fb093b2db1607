import { eventually } from '@affiliate/platform/testing';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import {
  adminAuth,
  allUpstreams,
  bearer,
  createProgramWithKey,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type ProgramWithKey,
} from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;
let program: ProgramWithKey;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url) });
  program = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

const api = () => request(gateway.url);

test('a valid key reaches the service', async () => {
  const response = await api().get('/api/v1/coupons').set(bearer(program.key)).expect(200);
  expect(response.body.headers['x-program-id']).toBe(program.programId);
});

test('401 when the Authorization header is missing', async () => {
  const response = await api().get('/api/v1/coupons').expect(401);
  expect(response.body).toMatchObject({ error: expect.stringContaining('Missing Authorization header') });
});

test('401 when the Authorization header is not Bearer', async () => {
  for (const header of [
    `Basic ${Buffer.from(`x:${program.key}`).toString('base64')}`,
    program.key,
    'Bearer',
    'Bearer ',
    `Token ${program.key}`,
  ]) {
    const response = await api().get('/api/v1/coupons').set('authorization', header).expect(401);
    expect(typeof response.body.error).toBe('string');
  }
});

test('a 401 carries WWW-Authenticate: Bearer, with invalid_token when a key was presented', async () => {
  const missing = await request(gateway.url).get('/api/v1/coupons').expect(401);
  expect(missing.headers['www-authenticate']).toBe('Bearer realm="api"');
  const unknown = await request(gateway.url).get('/api/v1/coupons').set(bearer('ak_live_unknown')).expect(401);
  expect(unknown.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
  const admin = await request(gateway.url).get('/admin/v1/programs').set(bearer('not-the-admin-token')).expect(401);
  expect(admin.headers['www-authenticate']).toBe('Bearer realm="admin", error="invalid_token"');
});

test('401 when the key is unknown', async () => {
  const response = await api().get('/api/v1/coupons').set(bearer('ak_live_not-a-real-key-0123456789abcdef0123456789')).expect(401);
  expect(response.body).toMatchObject({ error: 'Invalid API key: it is unknown or has been revoked' });
});

test('401 within seconds after the key is revoked', async () => {
  const extra = await request(gateway.url).post(`/admin/v1/programs/${program.programId}/api-keys`).set(adminAuth).expect(200);
  await api().get('/api/v1/coupons').set(bearer(extra.body.key)).expect(200);
  await request(gateway.url).delete(`/admin/v1/api-keys/${extra.body.id}`).set(adminAuth).expect(200, { id: extra.body.id, revoked: true });
  await api().get('/api/v1/coupons').set(bearer(extra.body.key)).expect(401);
  // The program's other keys keep working.
  await api().get('/api/v1/coupons').set(bearer(program.key)).expect(200);
});

test('a key revoked by another replica stops working within the cache lifetime', async () => {
  const other = await startGateway({ dbName: gateway.connection.name });
  try {
    const extra = await request(gateway.url).post(`/admin/v1/programs/${program.programId}/api-keys`).set(adminAuth).expect(200);
    await api().get('/api/v1/coupons').set(bearer(extra.body.key)).expect(200);
    await request(other.url).delete(`/admin/v1/api-keys/${extra.body.id}`).set(adminAuth).expect(200);
    await eventually(() => api().get('/api/v1/coupons').set(bearer(extra.body.key)).expect(401), 5000, 200);
  } finally {
    await other.stop();
  }
});

test('404 when the program of the key was deleted', async () => {
  const doomed = await createProgramWithKey(gateway);
  await api().get('/api/v1/coupons').set(bearer(doomed.key)).expect(200);
  await request(gateway.url)
    .delete(`/admin/v1/programs/${doomed.programId}`)
    .set(adminAuth)
    .expect(200, { id: doomed.programId, deleted: true });
  const response = await api().get('/api/v1/coupons').set(bearer(doomed.key)).expect(404);
  expect(response.body).toMatchObject({ error: 'The program of this API key no longer exists' });
  // Still 404 once the relay has published program.deleted and purged the tombstone.
  await eventually(async () =>
    expect(await gateway.connection.collection('programs').countDocuments({ _id: doomed.programId as never })).toBe(0),
  );
  await api().get('/api/v1/coupons').set(bearer(doomed.key)).expect(404);
});

test('403 when the program has no API access', async () => {
  const restricted = await createProgramWithKey(gateway, { apiAccess: false });
  const response = await api().get('/api/v1/coupons').set(bearer(restricted.key)).expect(403);
  expect(response.body).toMatchObject({ error: 'API access is not enabled for this program' });
  await request(gateway.url).put(`/admin/v1/programs/${restricted.programId}`).set(adminAuth).send({ apiAccess: true }).expect(200);
  await api().get('/api/v1/coupons').set(bearer(restricted.key)).expect(200);
});

test('authentication comes before routing: an unknown path without a key is 401', async () => {
  await api().get('/api/v1/nothing-here').expect(401);
  await api().get('/api/v1/nothing-here').set(bearer(program.key)).expect(404);
});

test('the services are never reached without authentication', async () => {
  const before = upstream.received.length;
  await api().post('/api/v1/coupons').send({ name: 'x' }).expect(401);
  await api().post('/api/v1/coupons').set(bearer('ak_live_unknown-key-xxxxxxxxxxxxxxxxxxxxxxxx')).send({ name: 'x' }).expect(401);
  expect(upstream.received.filter((received) => received.url !== '/healthz')).toHaveLength(before);
});

test('the numbered error shape of DELETE /coupons and PUT /referrals holds for gateway errors too', async () => {
  const response = await api().delete('/api/v1/coupons').send({ couponId: 'x' }).expect(401);
  expect(response.body).toMatchObject({ error: 401, message: expect.any(String) });
  const referral = await api().put('/api/v1/referrals').send({}).expect(401);
  expect(referral.body).toMatchObject({ error: 401, message: expect.any(String) });
});
