import type { EventEnvelope } from '@affiliate/contracts';
import { createLogger, EventBus, processedEvents } from '@affiliate/platform';
import { eventually, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import { hashApiKey } from '../src/admin/api-keys';
import type { RunningGateway } from '../src/gateway';
import { adminAuth, allUpstreams, bearer, startEchoUpstream, startGateway, type EchoUpstream } from './support';

const BOOTSTRAP_KEY = 'ak_demo_test_bootstrap_key_0123456789';
const ALL_SCOPES = ['read', 'write', 'finance', 'webhook_secrets'];

let upstream: EchoUpstream;
let gateway: RunningGateway;
let observer: EventBus;
const published: EventEnvelope[] = [];

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url), bootstrapApiKey: BOOTSTRAP_KEY });
  observer = new EventBus({
    url: gateway.settings.amqpUrl,
    exchange: gateway.settings.exchange,
    logger: createLogger('observer', 'silent'),
  });
  await observer.subscribe({
    queue: uniqueName('program-observer'),
    eventTypes: ['program.*'],
    // One message at a time, so the order recorded is the order published (with several in flight,
    // their handlers' database claims can finish in any order).
    prefetch: 1,
    processedEvents: processedEvents(gateway.connection, uniqueName('observer')),
    handler: async (event) => {
      published.push(event);
    },
  });
});

afterAll(async () => {
  await observer.close();
  await gateway.stop();
  await upstream.stop();
});

const admin = () => request(gateway.url);

test('the admin API refuses requests without the admin token', async () => {
  await admin().get('/admin/v1/programs').expect(401);
  await admin().get('/admin/v1/programs').set('authorization', 'Bearer wrong-token-0123456789').expect(401);
  const key = await admin().post('/admin/v1/programs').set(adminAuth).send({ name: 'P' }).expect(200);
  const apiKey = await admin().post(`/admin/v1/programs/${key.body.id}/api-keys`).set(adminAuth).expect(200);
  // An API key is not an admin token.
  await admin().get('/admin/v1/programs').set(bearer(apiKey.body.key)).expect(401);
});

test('a program is created with the defaults of the design', async () => {
  const response = await admin().post('/admin/v1/programs').set(adminAuth).send({ name: 'Acme' }).expect(200);
  expect(response.body).toEqual({
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    name: 'Acme',
    urlModifier: 'ref',
    reportingCurrency: 'USD',
    destinationUrls: [],
    requireApproval: false,
    defaultCommissionRate: 20,
    apiAccess: true,
    rateLimit: null,
    allowedOrigins: [],
    attributionWindowDays: null,
    attributionModel: 'FIRST_CLICK',
    clickDedupSeconds: 3600,
    maxWebhookEndpoints: 20,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });
  await admin().get(`/admin/v1/programs/${response.body.id}`).set(adminAuth).expect(200, response.body);
});

test('program changes are published as program.created, program.updated and program.deleted', async () => {
  const created = await admin()
    .post('/admin/v1/programs')
    .set(adminAuth)
    .send({
      name: 'Events',
      urlModifier: 'via',
      destinationUrls: [{ url: 'https://shop.example/?a=1', params: { utm: 'aff' } }],
      requireApproval: true,
      defaultCommissionRate: 35,
    })
    .expect(200);
  const id = created.body.id as string;
  const updated = await admin()
    .put(`/admin/v1/programs/${id}`)
    .set(adminAuth)
    .send({ defaultCommissionRate: 12.5, rateLimit: { points: 10, duration: 1 } })
    .expect(200);
  expect(updated.body).toMatchObject({
    defaultCommissionRate: 12.5,
    rateLimit: { points: 10, duration: 1 },
    urlModifier: 'via',
    requireApproval: true,
  });
  await admin().delete(`/admin/v1/programs/${id}`).set(adminAuth).expect(200, { id, deleted: true });

  const events = await eventually(() => {
    const mine = published.filter((event) => event.programId === id);
    expect(mine.map((event) => event.type)).toEqual(['program.created', 'program.updated', 'program.deleted']);
    return mine;
  });
  expect(events[0]?.data).toEqual(created.body);
  expect(events[1]?.data).toEqual(updated.body);
  expect(events[2]?.data).toEqual({ id });
  await admin().get(`/admin/v1/programs/${id}`).set(adminAuth).expect(404);
  await admin().put(`/admin/v1/programs/${id}`).set(adminAuth).send({ name: 'again' }).expect(404);
  await admin().delete(`/admin/v1/programs/${id}`).set(adminAuth).expect(404);
  await admin().post(`/admin/v1/programs/${id}/api-keys`).set(adminAuth).expect(404);
});

test('a new key is random, prefixed, shown once and stored only as a hash', async () => {
  const program = await admin().post('/admin/v1/programs').set(adminAuth).send({ name: 'Keys' }).expect(200);
  const first = await admin().post(`/admin/v1/programs/${program.body.id}/api-keys`).set(adminAuth).expect(200);
  const second = await admin().post(`/admin/v1/programs/${program.body.id}/api-keys`).set(adminAuth).expect(200);
  expect(first.body).toEqual({
    id: expect.any(String),
    key: expect.stringMatching(/^ak_live_[A-Za-z0-9_-]{43}$/),
    programId: program.body.id,
    scopes: ALL_SCOPES,
    createdAt: expect.any(String),
  });
  expect(second.body.key).not.toBe(first.body.key);
  expect(Buffer.from(first.body.key.slice('ak_live_'.length), 'base64url')).toHaveLength(32);

  const stored = await gateway.connection.collection('api_keys').findOne({ _id: first.body.id });
  expect(stored?.keyHash).toBe(hashApiKey(first.body.key));
  expect(JSON.stringify(stored)).not.toContain(first.body.key.slice('ak_live_'.length));

  const listed = await admin().get(`/admin/v1/programs/${program.body.id}/api-keys`).set(adminAuth).expect(200);
  expect(listed.body).toHaveLength(2);
  expect(JSON.stringify(listed.body)).not.toContain(first.body.key);
  expect(listed.body[1]).toEqual({
    id: first.body.id,
    programId: program.body.id,
    displayPrefix: first.body.key.slice(0, 12),
    scopes: ALL_SCOPES,
    createdAt: expect.any(String),
    revokedAt: null,
  });
});

test('revoking a key twice is fine and an unknown key id is 404', async () => {
  const program = await admin().post('/admin/v1/programs').set(adminAuth).send({ name: 'Revoke' }).expect(200);
  const key = await admin().post(`/admin/v1/programs/${program.body.id}/api-keys`).set(adminAuth).expect(200);
  await admin().delete(`/admin/v1/api-keys/${key.body.id}`).set(adminAuth).expect(200, { id: key.body.id, revoked: true });
  await admin().delete(`/admin/v1/api-keys/${key.body.id}`).set(adminAuth).expect(200, { id: key.body.id, revoked: true });
  await admin().delete('/admin/v1/api-keys/00000000-0000-4000-8000-000000000000').set(adminAuth).expect(404);
});

test('programs are listed newest first and paged with a Link header', async () => {
  for (const name of ['L1', 'L2', 'L3']) await admin().post('/admin/v1/programs').set(adminAuth).send({ name }).expect(200);
  const page = await admin().get('/admin/v1/programs?limit=2').set(adminAuth).expect(200);
  expect(page.body.map((program: { name: string }) => program.name)).toEqual(['L3', 'L2']);
  expect(page.headers.link).toMatch(/^<\/admin\/v1\/programs\?limit=2&startingAfter=[0-9a-f-]+>; rel="next"$/);
});

test('BOOTSTRAP_API_KEY gives a working demo program at first start, and only once', async () => {
  const response = await request(gateway.url).get('/api/v1/coupons').set(bearer(BOOTSTRAP_KEY)).expect(200);
  const programId = response.body.headers['x-program-id'];
  await admin().get(`/admin/v1/programs/${programId}`).set(adminAuth).expect(200);
  const restarted = await startGateway({
    dbName: gateway.connection.name,
    bootstrapApiKey: BOOTSTRAP_KEY,
    upstreams: allUpstreams(upstream.url),
  });
  try {
    expect(await gateway.store.apiKeys.countDocuments({ keyHash: hashApiKey(BOOTSTRAP_KEY) })).toBe(1);
    const again = await request(restarted.url).get('/api/v1/coupons').set(bearer(BOOTSTRAP_KEY)).expect(200);
    expect(again.body.headers['x-program-id']).toBe(programId);
  } finally {
    await restarted.stop();
  }
});

test('bad admin bodies are 400 with the field named, never 500', async () => {
  const bodies: unknown[] = [
    {},
    { name: '' },
    { name: 42 },
    { name: 'x'.repeat(10_000) },
    { name: { $gt: '' } },
    { name: 'ok', unknown: true },
    { name: 'ok', urlModifier: 'has space' },
    { name: 'ok', destinationUrls: [{ url: 'javascript:alert(1)' }] },
    { name: 'ok', destinationUrls: 'https://x.example' },
    { name: 'ok', defaultCommissionRate: -1 },
    { name: 'ok', defaultCommissionRate: 101 },
    { name: 'ok', rateLimit: { points: 1.5, duration: 1 } },
    { name: 'ok', rateLimit: { points: 0, duration: 1 } },
    { name: 'ok', rateLimit: { points: 10, duration: -1 } },
    { name: 'ok', apiAccess: 'yes' },
    { __proto__: { admin: true }, name: { nested: { deep: 1 } } },
    [],
    'text',
  ];
  for (const body of bodies) {
    const response = await admin()
      .post('/admin/v1/programs')
      .set(adminAuth)
      .send(body as object)
      .expect(400);
    expect(typeof response.body.error).toBe('string');
  }
  await admin().post('/admin/v1/programs').set(adminAuth).set('content-type', 'application/json').send('{"name":').expect(400);
  const program = await admin().post('/admin/v1/programs').set(adminAuth).send({ name: 'ok' }).expect(200);
  const invalid = await admin()
    .put(`/admin/v1/programs/${program.body.id}`)
    .set(adminAuth)
    .send({ defaultCommissionRate: 'high' })
    .expect(400);
  expect(invalid.body.error).toMatch(/defaultCommissionRate/);
});
