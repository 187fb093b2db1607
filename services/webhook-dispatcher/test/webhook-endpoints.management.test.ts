import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PUBLIC_EVENT_TYPES } from '@affiliate/contracts';
import type { RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId } from '@affiliate/platform/testing';
import request from 'supertest';
import { createSubscriberClient } from '../src/data-access/subscriber-client';
import { isPrivateAddress, refusedLiteral } from '../src/domain/subscriber-address';
import { bootDispatcher, createEndpoint, testDispatcherSettings } from './support/dispatcher';

let service: RunningService;
let strictService: RunningService;
const programId = newProgramId();
const otherProgramId = newProgramId();
const url = 'http://127.0.0.1:9/webhooks';

beforeAll(async () => {
  [service, strictService] = await Promise.all([bootDispatcher(), bootDispatcher(testDispatcherSettings({ allowPrivateUrls: false }))]);
});
afterAll(() => Promise.all([service.stop(), strictService.stop()]));

const api = () => request(service.server);
const as = (program: string) => internalHeaders(program);

test('creating an endpoint returns it with a whsec_ secret of at least 24 random bytes', async () => {
  const response = await api()
    .post('/webhook-endpoints')
    .set(as(programId))
    .send({ url, eventTypes: ['sale.created'], description: 'Books' })
    .expect(200);
  expect(response.body).toMatchObject({ url, eventTypes: ['sale.created'], description: 'Books', active: true, disabledReason: null });
  expect(response.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  expect(Buffer.from(response.body.secret.slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24);
  const other = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  expect(other.secret).not.toBe(response.body.secret);
});

test('reads never show the secret: GET by id gives one endpoint, GET without lookup a list newest first', async () => {
  const first = await createEndpoint(service, programId, { url, eventTypes: ['*'] });
  const second = await createEndpoint(service, programId, { url, eventTypes: ['coupon.*'] });
  const one = await api().get('/webhook-endpoints').query({ id: first.id }).set(as(programId)).expect(200);
  expect(one.body).toMatchObject({ id: first.id, eventTypes: ['*'] });
  expect(one.body.secret).toBeUndefined();
  const list = await api().get('/webhook-endpoints').set(as(programId)).expect(200);
  expect(Array.isArray(list.body)).toBe(true);
  expect(list.body[0].id).toBe(second.id);
  expect(list.body.every((endpoint: { secret?: string }) => endpoint.secret === undefined)).toBe(true);
});

test('the endpoint list pages with limit and a Link header', async () => {
  const program = newProgramId();
  for (let index = 0; index < 3; index += 1) await createEndpoint(service, program, { url, eventTypes: ['*'] });
  const page = await api().get('/webhook-endpoints').query({ limit: 2 }).set(as(program)).expect(200);
  expect(page.body).toHaveLength(2);
  expect(page.headers.link).toMatch(/rel="next"/);
  const rest = await api().get('/webhook-endpoints').query({ limit: 2, startingAfter: page.body[1].id }).set(as(program)).expect(200);
  expect(rest.body).toHaveLength(1);
});

test('eventTypes must be a non-empty subset of the public types or their wildcards', async () => {
  for (const eventTypes of [[], ['program.updated'], ['sale.refunded'], ['payout.created'], ['sales.*'], ['sale.*.x'], ['SALE.CREATED']]) {
    const response = await api().post('/webhook-endpoints').set(as(programId)).send({ url, eventTypes }).expect(400);
    expect(response.body.error).toMatch(/eventTypes/);
  }
  const all = await createEndpoint(service, programId, { url, eventTypes: [...PUBLIC_EVENT_TYPES] });
  expect(all.id).toBeDefined();
  const wildcards = await api()
    .post('/webhook-endpoints')
    .set(as(programId))
    .send({ url, eventTypes: ['sale.*', '*', 'sale.*'] })
    .expect(200);
  expect(wildcards.body.eventTypes).toEqual(['sale.*', '*']);
});

test('the endpoint and delivery lists refuse unknown query parameters, as every other list does', async () => {
  const endpoints = await api().get('/webhook-endpoints').query({ id: 'x', colour: 'blue' }).set(as(programId)).expect(400);
  expect(endpoints.body.error).toMatch(/colour/);
  const deliveries = await api().get('/webhook-deliveries').query({ statuss: 'failed' }).set(as(programId)).expect(400);
  expect(deliveries.body.error).toMatch(/statuss/);
});

test('the url must be http or https', async () => {
  for (const bad of ['ftp://example.com/hook', 'javascript:alert(1)', 'file:///etc/passwd', 'not a url', 'http://user:pw@example.com/']) {
    await api()
      .post('/webhook-endpoints')
      .set(as(programId))
      .send({ url: bad, eventTypes: ['*'] })
      .expect(400);
  }
});

test('private, loopback and link-local addresses are refused, also after DNS resolution', async () => {
  const strict = request(strictService.server);
  for (const bad of [
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://10.1.2.3/',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/',
    'http://[fe80::1]/',
    'http://[fd00::1]/',
    'http://[::ffff:192.168.0.1]/',
    'https://192.168.1.10/',
  ]) {
    const response = await strict
      .post('/webhook-endpoints')
      .set(as(programId))
      .send({ url: bad, eventTypes: ['*'] })
      .expect(400);
    expect(response.body.error).toMatch(/^url: /);
  }
  const created = await createEndpoint(strictService, programId, { url: 'https://93.184.215.14/hook', eventTypes: ['*'] });
  await strict
    .put('/webhook-endpoints')
    .set(as(programId))
    .send({ webhookEndpointId: created.id, url: 'http://127.0.0.1:3000/' })
    .expect(400);
});

test('the address check covers the private, loopback, link-local and unique-local ranges of IPv4 and IPv6', () => {
  for (const address of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
  ]) {
    expect([address, isPrivateAddress(address)]).toEqual([address, true]);
  }
  for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '172.32.0.1']) {
    expect([address, isPrivateAddress(address)]).toEqual([address, false]);
  }
});

// Forms that reach an IPv4 address through IPv6, and the special-purpose ranges a hand-written list missed.
const DISGUISED_OR_SPECIAL = [
  '::7f00:1', // IPv4-compatible ::127.0.0.1
  '::ffff:0:7f00:1', // IPv4-translated (RFC 6145)
  '64:ff9b::a00:1', // NAT64 (RFC 6052) to 10.0.0.1
  '64:ff9b:1::1', // local-use NAT64
  '2002:7f00:1::', // 6to4 around 127.0.0.1
  '2001::1', // Teredo
  '2001:db8::1', // documentation
  '192.0.2.1',
  '198.51.100.7',
  '203.0.113.9', // documentation
  '192.88.99.1', // 6to4 relay anycast
  '192.31.196.1', // AS112
  '100::1', // discard-only
  'fec0::1', // deprecated site-local
];

test('IPv4-compatible, translated, 6to4, Teredo, documentation and other special-purpose addresses are not public', () => {
  for (const address of DISGUISED_OR_SPECIAL) expect([address, isPrivateAddress(address)]).toEqual([address, true]);
});

test('those addresses are refused when an endpoint is created and when a delivery connects', async () => {
  const strict = request(strictService.server);
  for (const address of DISGUISED_OR_SPECIAL) {
    const url = `http://${address.includes(':') ? `[${address}]` : address}/hook`;
    const response = await strict
      .post('/webhook-endpoints')
      .set(as(programId))
      .send({ url, eventTypes: ['*'] });
    expect({ url, status: response.status }).toEqual({ url, status: 400 });
    expect({ url, refused: refusedLiteral(new URL(url), false) !== null }).toEqual({ url, refused: true });
  }
});

test('a delivery to a name that resolves to a private address is refused when it connects, and nothing reaches it', async () => {
  // The endpoint was accepted while its name pointed elsewhere (DNS rebinding): the check that counts
  // is the one at connect time. `localhost` stands for such a name; the subscriber is really there.
  let received = 0;
  const subscriber = createServer((_request, response) => {
    received += 1;
    response.end('ok');
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => subscriber.once('listening', resolve));
  const port = (subscriber.address() as AddressInfo).port;
  const delivery = (url: string) => ({ url, headers: { 'content-type': 'application/json' }, body: '{}' });
  try {
    const strict = createSubscriberClient({ timeoutMs: 2000, allowPrivateUrls: false, showPrivateResponses: false });
    for (const url of [`http://localhost:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`, `http://[::7f00:1]:${port}/hook`]) {
      const outcome = await strict.send(delivery(url));
      expect({ url, statusCode: outcome.statusCode, error: outcome.error }).toEqual({
        url,
        statusCode: null,
        error: expect.stringMatching(/private, loopback or link-local/),
      });
    }
    expect(received).toBe(0);
    // The same name with private addresses allowed (local development) is delivered: the guard refused it.
    const permissive = createSubscriberClient({ timeoutMs: 2000, allowPrivateUrls: true, showPrivateResponses: false });
    expect((await permissive.send(delivery(`http://localhost:${port}/hook`))).statusCode).toBe(200);
    expect(received).toBe(1);
  } finally {
    subscriber.close();
  }
});

test('PUT changes url, eventTypes, description and active, and shows no secret unless rotating', async () => {
  const endpoint = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  const response = await api()
    .put('/webhook-endpoints')
    .set(as(programId))
    .send({ webhookEndpointId: endpoint.id, url: 'https://example.com/new', eventTypes: ['referral.*'], description: 'New', active: false })
    .expect(200);
  expect(response.body).toMatchObject({ url: 'https://example.com/new', eventTypes: ['referral.*'], description: 'New', active: false });
  expect(response.body.secret).toBeUndefined();
  await api()
    .put('/webhook-endpoints')
    .set(as(programId))
    .send({ webhookEndpointId: endpoint.id, eventTypes: ['program.created'] })
    .expect(400);
});

test('rotating the secret returns a new one and shows until when the previous one keeps signing', async () => {
  const endpoint = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  const response = await api()
    .put('/webhook-endpoints')
    .set(as(programId))
    .send({ webhookEndpointId: endpoint.id, rotateSecret: true })
    .expect(200);
  expect(response.body.secret).toMatch(/^whsec_/);
  expect(response.body.secret).not.toBe(endpoint.secret);
  expect(Date.parse(response.body.previousSecretExpiresAt)).toBeGreaterThan(Date.now());
  const read = await api().get('/webhook-endpoints').query({ id: endpoint.id }).set(as(programId)).expect(200);
  expect(read.body).toMatchObject({ previousSecretExpiresAt: response.body.previousSecretExpiresAt });
  expect(read.body.secret).toBeUndefined();
});

test('GET /webhook-endpoints/secret reveals the current secret to the program that owns the endpoint only', async () => {
  const endpoint = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  const revealed = await api().get('/webhook-endpoints/secret').query({ webhookEndpointId: endpoint.id }).set(as(programId)).expect(200);
  expect(revealed.body).toEqual({ webhookEndpointId: endpoint.id, secret: endpoint.secret, previousSecretExpiresAt: null });
  await api().get('/webhook-endpoints/secret').query({ webhookEndpointId: endpoint.id }).set(as(otherProgramId)).expect(404);
  await api().get('/webhook-endpoints/secret').query({ webhookEndpointId: 'x' }).set(as(programId)).expect(400);
});

test('DELETE removes the endpoint', async () => {
  const endpoint = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  await api()
    .delete('/webhook-endpoints')
    .set(as(programId))
    .send({ webhookEndpointId: endpoint.id })
    .expect(200, { id: endpoint.id, deleted: true });
  await api().get('/webhook-endpoints').query({ id: endpoint.id }).set(as(programId)).expect(404);
  await api().delete('/webhook-endpoints').set(as(programId)).send({ webhookEndpointId: endpoint.id }).expect(404);
});

test('another program can neither see nor change nor delete the endpoint', async () => {
  const endpoint = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  await api().get('/webhook-endpoints').query({ id: endpoint.id }).set(as(otherProgramId)).expect(404);
  const list = await api().get('/webhook-endpoints').set(as(otherProgramId)).expect(200);
  expect(list.body.map((item: { id: string }) => item.id)).not.toContain(endpoint.id);
  await api().put('/webhook-endpoints').set(as(otherProgramId)).send({ webhookEndpointId: endpoint.id, active: false }).expect(404);
  await api().delete('/webhook-endpoints').set(as(otherProgramId)).send({ webhookEndpointId: endpoint.id }).expect(404);
  await api().post('/webhook-endpoints/test').set(as(otherProgramId)).send({ webhookEndpointId: endpoint.id }).expect(404);
  await api()
    .post('/webhook-deliveries/recover')
    .set(as(otherProgramId))
    .send({ webhookEndpointId: endpoint.id, since: new Date(0).toISOString() })
    .expect(404);
  const still = await api().get('/webhook-endpoints').query({ id: endpoint.id }).set(as(programId)).expect(200);
  expect(still.body.active).toBe(true);
});

test('bad bodies and queries get 4xx, never 500', async () => {
  const huge = 'x'.repeat(100_000);
  const bodies: unknown[] = [
    {},
    { url: 42, eventTypes: ['*'] },
    { url, eventTypes: 'sale.created' },
    { url, eventTypes: [42] },
    { url, eventTypes: [{ $ne: null }] },
    { url, eventTypes: ['*'], extra: true },
    { url: huge, eventTypes: ['*'] },
    { url, eventTypes: ['*'], description: huge },
    { url, eventTypes: ['*'], description: { $gt: '' } },
    { url: { __proto__: { admin: true } }, eventTypes: ['*'] },
    { url, eventTypes: Array.from({ length: 500 }, () => '*') },
    { url, eventTypes: ['*'], active: 'yes' },
    JSON.parse('{"__proto__": {"url": "http://x"}, "eventTypes": ["*"]}'),
    [],
    'text',
  ];
  for (const body of bodies) {
    const response = await api()
      .post('/webhook-endpoints')
      .set(as(programId))
      .send(body as object);
    // A bare string goes out as a form (not JSON): 415, the content type being the problem (issue 33).
    expect([body, response.status]).toEqual([body, typeof body === 'string' ? 415 : 400]);
  }
  const updates: unknown[] = [
    { webhookEndpointId: 'not-a-uuid' },
    { webhookEndpointId: { $ne: null } },
    { webhookEndpointId: newProgramId(), rotateSecret: 'true' },
    { webhookEndpointId: newProgramId(), active: 1 },
    { webhookEndpointId: newProgramId(), unknown: 1 },
  ];
  for (const body of updates) {
    const response = await api()
      .put('/webhook-endpoints')
      .set(as(programId))
      .send(body as object);
    expect([body, response.status]).toEqual([body, 400]);
  }
  for (const body of [{ deliveryId: -1 }, { deliveryId: 1.5 }, { deliveryId: 'x' }, {}]) {
    await api().post('/webhook-deliveries/retry').set(as(programId)).send(body).expect(400);
  }
  for (const body of [
    { webhookEndpointId: newProgramId(), since: 'yesterday' },
    { webhookEndpointId: newProgramId() },
    { webhookEndpointId: newProgramId(), since: new Date().toISOString(), until: 5 },
  ]) {
    await api().post('/webhook-deliveries/recover').set(as(programId)).send(body).expect(400);
  }
  const recover = await api()
    .post('/webhook-deliveries/recover')
    .set(as(programId))
    .send({ webhookEndpointId: newProgramId(), since: '2025-02-01T00:00:00Z', until: '2025-01-01T00:00:00Z' });
  expect(recover.status).toBeGreaterThanOrEqual(400);
  expect(recover.status).toBeLessThan(500);
  for (const query of [{ status: 'done' }, { endpointId: 'x' }, { limit: '-1' }, { limit: '1.5' }, { limit: '5000' }]) {
    const response = await api().get('/webhook-deliveries').query(query).set(as(programId));
    expect([query, response.status]).toEqual([query, 400]);
  }
  // The query parser is flat: an operator-looking key is just an unknown parameter, refused, never a filter.
  await api().get('/webhook-deliveries').query({ 'status[$ne]': 'x' }).set(as(programId)).expect(400);
  await api().post('/webhook-endpoints').set(as(programId)).set('content-type', 'application/json').send('{"url": ').expect(400);
});
