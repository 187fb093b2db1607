import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AppError,
  bootService,
  createLogger,
  createRouter,
  createServiceClient,
  parseBody,
  parseConfig,
  programIdOf,
  baseConfigShape,
  SHIPPED_DEFAULT_SECRETS,
  type RunningService,
} from '@affiliate/platform';
import { internalHeaders, newProgramId, testServiceSettings, TEST_INTERNAL_TOKEN } from '@affiliate/platform/testing';
import request from 'supertest';
import { z } from 'zod';

let service: RunningService;

beforeAll(async () => {
  const routes = createRouter();
  routes.post('/echo', (req, res) => {
    const body = parseBody(z.object({ name: z.string().min(1), count: z.number().int() }).strict(), req);
    res.json({ ...body, programId: programIdOf(res) });
  });
  routes.get('/boom', () => {
    throw new Error('secret internals');
  });
  routes.get('/things/:id', (req, res) => {
    res.json({ id: req.params.id });
  });
  routes.get('/teapot', () => {
    throw new AppError(418, 'short and stout');
  });
  service = await bootService(testServiceSettings('platform-app'), () => ({ routes }));
});
afterAll(() => service.stop());

const programId = newProgramId();

test('health, readiness and metrics answer without the internal credential', async () => {
  await request(service.server).get('/healthz').expect(200, { status: 'ok' });
  const ready = await request(service.server).get('/readyz').expect(200);
  // This service consumes no events, so the broker is not part of its readiness (its outbox waits).
  expect(ready.body.checks).toEqual({ accepting: true, mongo: true });
  const metrics = await request(service.server).get('/metrics').expect(200);
  expect(metrics.text).toContain('http_request_duration_seconds');
});

test('a request without the internal credential is refused with 401', async () => {
  const response = await request(service.server).post('/echo').send({ name: 'a', count: 1 }).expect(401);
  expect(response.body).toMatchObject({ error: 'Missing or invalid internal credential' });
});

test('a request without a program scope is refused with 401', async () => {
  await request(service.server).post('/echo').set('x-internal-token', TEST_INTERNAL_TOKEN).send({}).expect(401);
});

test('the program scope of the request reaches the route', async () => {
  const response = await request(service.server).post('/echo').set(internalHeaders(programId)).send({ name: 'a', count: 1 }).expect(200);
  expect(response.body).toEqual({ name: 'a', count: 1, programId });
});

test('malformed JSON is a 400 that says so', async () => {
  const response = await request(service.server)
    .post('/echo')
    .set(internalHeaders(programId))
    .set('content-type', 'application/json')
    .send('{"name": ')
    .expect(400);
  expect(response.body).toMatchObject({ error: 'Request body is not valid JSON' });
});

test('a body the gateway would read another way is refused, never decoded: a byte-order mark is a 400, a charset other than UTF-8 a 415', async () => {
  const json = JSON.stringify({ name: 'a', count: 1 });
  // fetch sends the bytes as given (supertest would serialise a Buffer as JSON).
  const post = (contentType: string, body: Buffer) =>
    fetch(`${service.url}/echo`, { method: 'POST', headers: { ...internalHeaders(programId), 'content-type': contentType }, body });
  const bom = await post('application/json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]));
  expect({ status: bom.status, body: await bom.json() }).toEqual({
    status: 400,
    body: expect.objectContaining({ error: 'Request body must not start with a byte-order mark; send UTF-8 JSON without one' }),
  });
  const utf16 = await post('application/json; charset=utf-16le', Buffer.from(json, 'utf16le'));
  expect({ status: utf16.status, body: await utf16.json() }).toEqual({
    status: 415,
    body: expect.objectContaining({ error: expect.stringContaining('charset "utf-16le" is not accepted') }),
  });
  // UTF-8, named or not, is the one reading accepted.
  for (const contentType of ['application/json', 'application/json; charset=UTF-8'])
    expect((await post(contentType, Buffer.from(json))).status).toBe(200);
});

test('a wrong type is a 400 naming the field', async () => {
  const response = await request(service.server).post('/echo').set(internalHeaders(programId)).send({ name: 'a', count: 'x' }).expect(400);
  expect(response.body.error).toMatch(/^count: /);
});

test('an unknown field is a 400 naming it', async () => {
  const response = await request(service.server)
    .post('/echo')
    .set(internalHeaders(programId))
    .send({ name: 'a', count: 1, admin: true })
    .expect(400);
  expect(response.body).toMatchObject({ error: 'Unknown field in body: admin' });
});

test('a body over the limit is a 413', async () => {
  await request(service.server)
    .post('/echo')
    .set(internalHeaders(programId))
    .send({ name: 'x'.repeat(2 * 1024 * 1024), count: 1 })
    .expect(413)
    .expect((response) => expect(response.body).toMatchObject({ error: 'Request body is too large' }));
});

test('a path parameter whose percent-encoding is not UTF-8 is a 400 that says so, not a 500', async () => {
  const response = await request(service.server).get('/things/%E0').set(internalHeaders(programId)).expect(400);
  expect(response.body).toMatchObject({
    error: 'The path is malformed: a percent-encoded part is not valid UTF-8',
    code: 'parameter_invalid',
  });
  await request(service.server).get('/things/caf%C3%A9').set(internalHeaders(programId)).expect(200, { id: 'café' });
});

test('an unknown route is a 404', async () => {
  await request(service.server)
    .get('/nowhere')
    .set(internalHeaders(programId))
    .expect(404)
    .expect((response) => expect(response.body).toMatchObject({ error: 'No route for GET /nowhere' }));
});

test('a route matches its exact case only: a case variant of its path is a 404', async () => {
  await request(service.server).post('/Echo').set(internalHeaders(programId)).send({ name: 'a', count: 1 }).expect(404);
  await request(service.server).post('/echo').set(internalHeaders(programId)).send({ name: 'a', count: 1 }).expect(200);
});

test('an unexpected failure is a 500 that reveals nothing', async () => {
  const response = await request(service.server).get('/boom').set(internalHeaders(programId)).expect(500);
  expect(response.body).toMatchObject({ error: 'Internal server error' });
});

test('an application error keeps its status and message', async () => {
  await request(service.server)
    .get('/teapot')
    .set(internalHeaders(programId))
    .expect(418)
    .expect((response) => expect(response.body).toMatchObject({ error: 'short and stout' }));
});

test('a bad setting is reported with the variable name', () => {
  expect(() => parseConfig(baseConfigShape, { AMQP_URL: 'http://nope', LOG_LEVEL: 'loud' })).toThrow(
    /LOG_LEVEL: Invalid enum value[\s\S]*AMQP_URL: must be an amqp:\/\/ URL/,
  );
});

test('AMQP_URL names one broker or the nodes of a cluster, each an amqp:// URL', () => {
  const cluster = 'amqp://guest:guest@127.0.0.1:5672, amqp://guest:guest@127.0.0.1:5673,amqps://u:p@rabbit-2.example.net:5671';
  expect(parseConfig(baseConfigShape, { AMQP_URL: cluster }).AMQP_URL).toBe(cluster);
  expect(() => parseConfig(baseConfigShape, { AMQP_URL: 'amqp://127.0.0.1:5672,http://127.0.0.1:5673' })).toThrow(
    /AMQP_URL: must be an amqp:\/\/ URL, or several/,
  );
  expect(() => parseConfig(baseConfigShape, { AMQP_URL: 'amqp://127.0.0.1:5672,' })).toThrow(/AMQP_URL/);
});

test('production refuses to start without its secrets', () => {
  expect(() => parseConfig(baseConfigShape, { NODE_ENV: 'production' }, { required: ['INTERNAL_TOKEN'] })).toThrow(
    /INTERNAL_TOKEN: required when NODE_ENV=production/,
  );
});

test('production refuses a secret this repository ships, naming the variable', () => {
  for (const shipped of SHIPPED_DEFAULT_SECRETS) {
    expect(() =>
      parseConfig(baseConfigShape, { NODE_ENV: 'production', INTERNAL_TOKEN: shipped }, { required: ['INTERNAL_TOKEN'] }),
    ).toThrow(/INTERNAL_TOKEN: is a shipped default/);
  }
});

test('production refuses a secret shorter than 32 characters', () => {
  // Generated here, as an operator would: a value written in the repository is public (and refused).
  const generated = randomBytes(24).toString('base64'); // 32 characters
  const short = generated.slice(0, 31);
  expect(() => parseConfig(baseConfigShape, { NODE_ENV: 'production', INTERNAL_TOKEN: short }, { required: ['INTERNAL_TOKEN'] })).toThrow(
    /INTERNAL_TOKEN: must be at least 32 characters/,
  );
  expect(
    parseConfig(baseConfigShape, { NODE_ENV: 'production', INTERNAL_TOKEN: generated }, { required: ['INTERNAL_TOKEN'] }).INTERNAL_TOKEN,
  ).toBe(generated);
});

test('production refuses a whitespace-only or predictable secret of 32 characters or more, naming the variable', () => {
  const refusedWith = (value: string) => () =>
    parseConfig(baseConfigShape, { NODE_ENV: 'production', INTERNAL_TOKEN: value }, { required: ['INTERNAL_TOKEN'] });
  expect(refusedWith(' '.repeat(40))).toThrow(/INTERNAL_TOKEN: is only whitespace/);
  expect(refusedWith('\t\n'.repeat(20))).toThrow(/INTERNAL_TOKEN: is only whitespace/);
  const repeatedOrRuns = [
    'passwordpasswordpasswordpassword',
    'passwordpasswordpasswordpassword1',
    '0123456789abcdef0123456789abcdef',
    'abcdefghijklmnopqrstuvwxyz0123456789',
    'zyxwvutsrqponmlkjihgfedcba9876543210',
  ];
  for (const predictable of ['a'.repeat(32), `${'x'.repeat(31)}y`, 'ab'.repeat(16), '0123'.repeat(8), ...repeatedOrRuns]) {
    expect(refusedWith(predictable)).toThrow(/INTERNAL_TOKEN: is too predictable/);
  }
  expect(
    parseConfig(
      baseConfigShape,
      { NODE_ENV: 'production', INTERNAL_TOKEN: randomBytes(16).toString('hex') },
      { required: ['INTERNAL_TOKEN'] },
    ),
  ).toBeTruthy();
  // What the README tells operators to run, and base64 of the same length: always accepted.
  for (let generated = 0; generated < 500; generated += 1) {
    for (const secret of [randomBytes(16).toString('hex'), randomBytes(32).toString('hex'), randomBytes(24).toString('base64')]) {
      expect(
        parseConfig(baseConfigShape, { NODE_ENV: 'production', INTERNAL_TOKEN: secret }, { required: ['INTERNAL_TOKEN'] }).INTERNAL_TOKEN,
      ).toBe(secret);
    }
  }
});

test('an optional secret that is set obeys the production rules too', () => {
  const shape = { ...baseConfigShape, EXTRA_KEY: z.string().optional() };
  const env = { NODE_ENV: 'production', INTERNAL_TOKEN: randomBytes(20).toString('hex') };
  expect(() => parseConfig(shape, { ...env, EXTRA_KEY: 'short' }, { required: ['INTERNAL_TOKEN'], optional: ['EXTRA_KEY'] })).toThrow(
    /EXTRA_KEY: must be at least 32/,
  );
  expect(parseConfig(shape, env, { required: ['INTERNAL_TOKEN'], optional: ['EXTRA_KEY'] }).EXTRA_KEY).toBeUndefined();
});

test('a service listens on loopback unless HOST says otherwise', () => {
  expect((service.server.address() as AddressInfo).address).toBe('127.0.0.1');
  expect(parseConfig(baseConfigShape, {}).HOST).toBe('127.0.0.1');
  expect(parseConfig(baseConfigShape, { HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
});

test('outside production the local defaults are allowed', () => {
  expect(parseConfig(baseConfigShape, {}, { required: ['INTERNAL_TOKEN'] }).INTERNAL_TOKEN).toBe('local-internal-token-change-me');
});

/** A service client to a test server of this file, under the name its messages use. */
function clientOf(server: Server, name: string, options: { timeoutMs?: number } = {}) {
  return createServiceClient({
    name,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    internalToken: TEST_INTERNAL_TOKEN,
    logger: createLogger('client-test', 'silent'),
    ...options,
  });
}

test('a dead upstream makes the circuit open and later calls fail fast with 503', async () => {
  // Accepts the connection and drops it without an answer, as a crashing process does.
  const server = createServer((req) => {
    req.socket.destroy();
  }).listen(0);
  await once(server, 'listening');
  const client = clientOf(server, 'flaky');
  try {
    for (let call = 0; call < 6; call += 1) {
      await expect(client.request({ method: 'GET', path: '/x', programId })).rejects.toMatchObject({ status: 503 });
    }
    expect(client.circuitOpen(programId)).toBe(true);
  } finally {
    client.shutdown();
    server.close();
  }
});

test("one program's timeouts open its own circuit to another service, never another program's", async () => {
  // The other service hangs for one program's calls (a heavy query, a slow dependency of its own) and
  // answers the others at once.
  const slowProgram = newProgramId();
  const server = createServer((req, res) => {
    if (req.headers['x-program-id'] === slowProgram) return;
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  }).listen(0);
  await once(server, 'listening');
  const client = clientOf(server, 'shared', { timeoutMs: 1000 });
  try {
    for (let call = 0; call < 6; call += 1) {
      await expect(client.request({ method: 'GET', path: '/x', programId: slowProgram })).rejects.toMatchObject({ status: 503 });
    }
    expect(client.circuitOpen(slowProgram)).toBe(true);
    for (let call = 0; call < 6; call += 1) {
      await expect(client.request({ method: 'GET', path: '/x', programId })).resolves.toEqual({ status: 200, body: { ok: true } });
    }
    expect(client.circuitOpen(programId)).toBe(false);
  } finally {
    client.shutdown();
    server.closeAllConnections();
    server.close();
  }
});

test('an upstream 4xx is returned to the caller, not counted as a failure', async () => {
  const server = createServer((_req, res) => {
    res.statusCode = 404;
    res.setHeader('content-type', 'application/json');
    res.end('{"error":"nope"}');
  }).listen(0);
  await once(server, 'listening');
  const client = clientOf(server, 'strict');
  try {
    for (let call = 0; call < 6; call += 1) {
      await expect(client.request({ method: 'GET', path: '/x', programId })).resolves.toEqual({ status: 404, body: { error: 'nope' } });
    }
    expect(client.circuitOpen(programId)).toBe(false);
  } finally {
    client.shutdown();
    server.close();
  }
});

test('an upstream answering 5xx is passed on as 503, a busy one with its Retry-After, and never opens the circuit', async () => {
  let answers = 0;
  const server = createServer((_req, res) => {
    answers += 1;
    res.statusCode = answers % 2 ? 503 : 500;
    if (res.statusCode === 503) res.setHeader('retry-after', '2');
    res.setHeader('content-type', 'application/json');
    res.end('{"error":"busy"}');
  }).listen(0);
  await once(server, 'listening');
  const client = clientOf(server, 'busy');
  try {
    for (let call = 0; call < 10; call += 1) {
      const shed = call % 2 === 0;
      await expect(client.request({ method: 'GET', path: '/x', programId })).rejects.toMatchObject({
        status: 503,
        retryAfterSeconds: shed ? 2 : undefined,
        message: shed ? 'The busy service is busy; retry in a moment' : 'The busy service is unavailable; retry later',
      });
    }
    expect(answers).toBe(10);
    expect(client.circuitOpen(programId)).toBe(false);
  } finally {
    client.shutdown();
    server.close();
  }
});
