import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@affiliate/platform/testing';
import mongoose from 'mongoose';
import { ADMIN_TOKEN, apiClient, Subscriber, System, type Api } from '../harness';

let system: System;
let api: Api;
const subscriber = new Subscriber();

beforeAll(async () => {
  system = await System.start();
  // A rate limit above the bursts below: the limiter has tests of its own.
  ({ api } = await system.createProgram({ rateLimit: { points: 10_000, duration: 1 } }));
  await api.post('/webhook-endpoints', { url: await subscriber.start(), eventTypes: ['coupon.updated'] });
}, 180_000);
afterAll(async () => {
  await subscriber.stop();
  await system?.stop();
});

/**
 * A client as the API asks: a 503 is retried after its Retry-After, and so is a 409 of a request
 * still running. On a busy machine the services shed part of a burst that way (admission's
 * deadline) instead of letting it time out, so a burst test that did not retry would be testing the
 * machine's speed, not the rule it names.
 */
async function postAsTheApiAsks(path: string, body: object, headers?: Record<string, string>) {
  for (let attempt = 1; ; attempt += 1) {
    const answer = await api.post(path, body, headers);
    // A 409 with Retry-After: the same Idempotency-Key's first try is still running.
    const again = answer.status === 503 || (answer.status === 409 && answer.headers.has('retry-after'));
    if (!again || attempt === 30) return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after') ?? 1) * 1000));
  }
}

describe('concurrency', () => {
  test('200 concurrent sales against limited codes and a limited coupon: counters exact, never past a limit', async () => {
    const affiliate = (await api.post('/affiliates', { firstName: 'Race', lastName: 'Track', email: 'race@example.com' })).body;
    const coupon = (await api.post('/coupons', { name: 'Limited', percentOff: 10, maxRedemptions: 50 })).body;
    await api.post('/promotional-codes', { couponId: coupon.id, code: 'RACE-A', affiliateId: affiliate.id, maxRedemptions: 30 });
    await api.post('/promotional-codes', { couponId: coupon.id, code: 'RACE-B', affiliateId: affiliate.id });

    // The same externalId on a retry: a sale the service finished after the gateway gave up is
    // returned, not recorded twice.
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        postAsTheApiAsks('/sales', { promoCode: index % 2 ? 'RACE-A' : 'RACE-B', totalEarned: 10, externalId: `race_${index}` }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    const others = answers.filter((answer) => answer.status !== 200 && answer.status !== 400).slice(0, 3);
    expect(others.map((answer) => `${answer.status} ${JSON.stringify(answer.body)}`)).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 400)).toHaveLength(150);

    const [codeA, codeB] = await Promise.all([api.get('/promotional-codes?code=RACE-A'), api.get('/promotional-codes?code=RACE-B')]);
    expect(codeA.body.timesRedeemed).toBeLessThanOrEqual(30);
    expect(codeA.body.timesRedeemed + codeB.body.timesRedeemed).toBe(50);
    expect((await api.get(`/coupons?id=${coupon.id}`)).body.timesRedeemed).toBe(50);
    expect((await api.get(`/sales?affiliateId=${affiliate.id}`)).body).toHaveLength(50);
  }, 120_000);

  test('50 concurrent affiliate sign-ups whose emails share a local part all succeed with distinct slugs', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        postAsTheApiAsks(
          '/affiliates',
          { firstName: 'Sam', lastName: `No${index}`, email: `sam@shop${index}.example.com` },
          { 'Idempotency-Key': `sam-signup-${index}` },
        ),
      ),
    );
    const refused = answers.filter((answer) => answer.status !== 200).slice(0, 3);
    expect(refused.map((answer) => `${answer.status} ${JSON.stringify(answer.body)}`)).toEqual([]);
    const slugs = answers.map((answer) => answer.body.affiliateLinks[0].link.toLowerCase());
    expect(new Set(slugs).size).toBe(50);
  }, 120_000);

  test('parallel PUTs on one coupon leave one consistent final state, announced by the last coupon.updated', async () => {
    const coupon = (await api.post('/coupons', { name: 'Contended', percentOff: 10 })).body;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        api.put('/coupons', { couponId: coupon.id, name: `version ${index}`, metadata: { version: String(index) } }),
      ),
    );
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const final = (await api.get(`/coupons?id=${coupon.id}`)).body;
    // Name and metadata always come from the same request: no write was half applied.
    expect(final.name).toBe(`version ${final.metadata.version}`);
    const succeeded = answers.filter((answer) => answer.status === 200).length;
    await eventually(() => {
      const updates = subscriber.events('coupon.updated').filter((delivery) => delivery.body.data.id === coupon.id);
      expect(updates).toHaveLength(succeeded);
      const newest = updates.reduce((latest, delivery) => (delivery.body.data.updatedAt > latest.body.data.updatedAt ? delivery : latest));
      expect(newest.body.data.name).toBe(final.name);
    }, 30_000);
  }, 120_000);
});

describe('hostile input through the gateway: a clear 4xx, and nothing changes', () => {
  const couponCount = async () => (await api.get('/coupons?limit=1000')).body.length as number;

  test('a 10 MB body is refused with 413', async () => {
    const before = await couponCount();
    const response = await api.post('/coupons', { name: 'x'.repeat(10 * 1024 * 1024), percentOff: 10 });
    expect(response.status).toBe(413);
    expect(await couponCount()).toBe(before);
  });

  test('deeply nested JSON is refused with 400', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const response = await api.request('POST', '/coupons', deep, { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
  });

  test('invalid UTF-8 is refused with 400', async () => {
    const response = await fetch(`${system.gatewayUrl}/api/v1/coupons`, {
      method: 'POST',
      headers: { authorization: (await adminKeyHeader()).authorization, 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('","percentOff":10}')]),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'Request body is not valid UTF-8' });
  });

  test('prototype-pollution keys are refused and pollute nothing', async () => {
    const before = await couponCount();
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const response = await api.request('POST', '/coupons', `{"name":"p","percentOff":10,"${key}":{"polluted":true}}`, {
        'content-type': 'application/json',
      });
      expect({ key, status: response.status }).toEqual({ key, status: 400 });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await couponCount()).toBe(before);
  });

  test('operator objects and $-prefixed keys in string fields are refused (no NoSQL injection)', async () => {
    const injections: [string, string, unknown][] = [
      ['POST', '/coupons', { name: { $gt: '' }, percentOff: 10 }],
      ['POST', '/promotional-codes', { couponId: { $ne: null }, code: 'INJ' }],
      ['POST', '/affiliates', { firstName: 'a', lastName: 'b', email: { $regex: '.*' } }],
      ['POST', '/sales', { promoCode: { $exists: true }, totalEarned: 1 }],
      ['POST', '/referrals', { affiliateEmail: { $ne: 'x' }, email: 'victim@example.com' }],
      ['PUT', '/coupons', { couponId: { $ne: '' }, name: 'all of them' }],
      ['DELETE', '/promotional-codes', { promotionalCodeId: { $ne: '' } }],
      ['POST', '/coupons', { name: 'x', percentOff: 10, $where: 'sleep(1000)' }],
    ];
    for (const [method, path, body] of injections) {
      const response = await api.request(method, path, body);
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 400 });
    }
    for (const query of ['/coupons?id[$ne]=x', '/affiliates?email[$regex]=.*', '/promotional-codes?code[$gt]=', '/sales?id[$ne]=1']) {
      const response = await api.get(query);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
  });

  test('header injection in slugs and codes is refused', async () => {
    const affiliate = (await api.post('/affiliates', { firstName: 'Head', lastName: 'Er', email: 'header@example.com' })).body;
    const coupon = (await api.post('/coupons', { name: 'headers', percentOff: 10 })).body;
    const link = await api.post('/links', { link: 'evil\r\nSet-Cookie: session=stolen', affiliateId: affiliate.id });
    expect(link.status).toBe(400);
    expect(link.body.error).toBe('Link can only contain letters, numbers, and hyphens');
    const code = await api.post('/promotional-codes', { couponId: coupon.id, code: 'EVIL\r\nX-Injected: 1' });
    expect(code.status).toBe(400);
    expect(code.headers.get('x-injected')).toBeNull();
  });
});

describe('secrets at rest', () => {
  test('an idempotent replay of an endpoint creation never includes the signing secret, nor does the stored record', async () => {
    const body = { url: 'http://127.0.0.1:9/replayed', eventTypes: ['sale.created'] };
    const first = await api.post('/webhook-endpoints', body, { 'Idempotency-Key': 'endpoint-replay-1' });
    expect(first.status).toBe(200);
    expect(first.body.secret).toMatch(/^whsec_/);
    const replay = await api.post('/webhook-endpoints', body, { 'Idempotency-Key': 'endpoint-replay-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(Object.fromEntries(Object.entries(first.body).filter(([name]) => name !== 'secret')));
    const client = await mongoose.mongo.MongoClient.connect(system.mongo.url);
    try {
      // The answers kept for replays (a request still being processed has none yet).
      const stored = await client.db(`${system.dbPrefix}_gateway`).collection('idempotency_keys').find({ state: 'completed' }).toArray();
      expect(stored.length).toBeGreaterThan(0);
      const bodies = stored.map((record) =>
        Buffer.from((record.response as { body: { buffer: Uint8Array } }).body.buffer).toString('utf8'),
      );
      expect(bodies.some((text) => text.includes(first.body.id))).toBe(true);
      expect(bodies.join('\n')).not.toContain(first.body.secret);
    } finally {
      await client.close();
    }
  });
});

describe('one tenant cannot open a circuit for another', () => {
  test('test sends to a subscriber that answers after 12 s and impossible dates leave every other program served', async () => {
    const slowSubscriber = createServer((_request, response) => {
      setTimeout(() => response.end('late'), 12_000).unref();
    });
    await new Promise<void>((resolve) => slowSubscriber.listen(0, '127.0.0.1', resolve));
    try {
      const attacker = (await system.createProgram({ rateLimit: { points: 1000, duration: 1 } })).api;
      const victim = (await system.createProgram()).api;
      const endpoint = (
        await attacker.post('/webhook-endpoints', {
          url: `http://127.0.0.1:${(slowSubscriber.address() as AddressInfo).port}/hooks`,
          eventTypes: ['*'],
        })
      ).body;
      const started = Date.now();
      const tests = await Promise.all(
        Array.from({ length: 4 }, () => attacker.post('/webhook-endpoints/test', { webhookEndpointId: endpoint.id })),
      );
      for (const response of tests) {
        // Answered within the gateway's 10 s, the subscriber's timeout reported as the result.
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({
          succeeded: false,
          statusCode: null,
          error: expect.stringMatching(/no complete answer within \d+ ms/),
        });
      }
      expect(Date.now() - started).toBeLessThan(10_000);
      for (let attempt = 0; attempt < 4; attempt += 1) {
        expect((await attacker.post('/coupons', { name: 'x', percentOff: 10, redeemBy: '2024-01-01T00:00:00+99:99' })).status).toBe(400);
      }
      expect((await victim.get('/webhook-endpoints')).status).toBe(200);
      expect((await victim.post('/coupons', { name: 'still served', percentOff: 10 })).status).toBe(200);
    } finally {
      slowSubscriber.closeAllConnections();
      await new Promise<void>((resolve) => slowSubscriber.close(() => resolve()));
    }
  }, 60_000);
});

describe('hostile dates and queries: a 4xx, never a 5xx', () => {
  // Offsets no clock has: accepted by a plain RFC 3339 pattern, an Invalid Date (a 500) once parsed.
  const IMPOSSIBLE_INSTANTS = [
    '2024-01-01T00:00:00+99:99',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01T00:00:00-23:60',
    '2024-01-01T00:00:00.5+9959',
  ];

  test('every date field of every request body refuses an impossible instant with 400 naming the field, and changes nothing', async () => {
    const document = (await apiClient(system.gatewayUrl, undefined).get('/api/v1/openapi.json')).body as OpenApiDocument;
    const coupon = (await api.post('/coupons', { name: 'dated', percentOff: 10 })).body;
    const code = (await api.post('/promotional-codes', { couponId: coupon.id, code: 'DATED10' })).body;
    const endpoint = (await api.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['sale.created'] })).body;
    const valid = '2024-01-01T00:00:00Z';
    const cases: Record<string, (value: string) => [string, string, Record<string, unknown>]> = {
      'POST /api/v1/coupons redeemBy': (value) => ['POST', '/coupons', { name: 'dated 2', percentOff: 10, redeemBy: value }],
      'PUT /api/v1/coupons redeemBy': (value) => ['PUT', '/coupons', { couponId: coupon.id, redeemBy: value }],
      'POST /api/v1/promotional-codes expiresAt': (value) => [
        'POST',
        '/promotional-codes',
        { couponId: coupon.id, code: 'DATED20', expiresAt: value },
      ],
      'PUT /api/v1/promotional-codes expiresAt': (value) => ['PUT', '/promotional-codes', { promotionalCodeId: code.id, expiresAt: value }],
      'POST /api/v1/clicks occurredAt': (value) => ['POST', '/clicks', { link: 'dated', occurredAt: value }],
      'POST /api/v1/sales paidAt': (value) => ['POST', '/sales', { promoCode: 'DATED10', totalEarned: 10, paidAt: value }],
      'POST /api/v1/webhook-deliveries/recover since': (value) => [
        'POST',
        '/webhook-deliveries/recover',
        { webhookEndpointId: endpoint.id, since: value },
      ],
      'POST /api/v1/webhook-deliveries/recover until': (value) => [
        'POST',
        '/webhook-deliveries/recover',
        { webhookEndpointId: endpoint.id, since: valid, until: value },
      ],
      'POST /api/v1/webhook-deliveries/replay since': (value) => [
        'POST',
        '/webhook-deliveries/replay',
        { webhookEndpointId: endpoint.id, since: value },
      ],
      'POST /api/v1/webhook-deliveries/replay until': (value) => [
        'POST',
        '/webhook-deliveries/replay',
        { webhookEndpointId: endpoint.id, since: valid, until: value },
      ],
      'POST /api/v1/webhook-endpoints backfillSince': (value) => [
        'POST',
        '/webhook-endpoints',
        { url: 'http://127.0.0.1:9/backfill', eventTypes: ['sale.created'], backfillSince: value },
      ],
    };
    // Read from the published document, so a new date field fails this test until it is covered here.
    expect(Object.keys(cases).sort()).toEqual(dateFieldsOfRequestBodies(document).sort());

    const state = async () => ({
      coupons: (await api.get('/coupons?limit=1000')).body,
      codes: (await api.get('/promotional-codes?limit=1000')).body,
      sales: (await api.get('/sales?limit=1000')).body,
    });
    const before = await state();
    for (const [field, build] of Object.entries(cases)) {
      for (const value of IMPOSSIBLE_INSTANTS) {
        const [method, path, body] = build(value);
        const response = await api.request(method, path, body);
        const name = field.split(' ').pop() as string;
        expect({
          field,
          value,
          status: response.status,
          names: String(response.body?.error ?? response.body?.message).includes(name),
        }).toEqual({ field, value, status: 400, names: true });
      }
    }
    expect(await state()).toEqual(before);
  });

  test('every query parameter of every read answers hostile values with a 4xx or a result, never a 5xx', async () => {
    const document = (await apiClient(system.gatewayUrl, undefined).get('/api/v1/openapi.json')).body as OpenApiDocument;
    const admin = apiClient(system.gatewayUrl, ADMIN_TOKEN);
    const { key } = await system.createProgram({ rateLimit: { points: 100_000, duration: 1 } });
    const program = apiClient(system.gatewayUrl, key);
    // Already percent-encoded: invalid UTF-8, NUL, an impossible instant, operators, huge and odd numbers.
    const HOSTILE = [
      '',
      '%ED%A0%80',
      '%00',
      '2024-01-01T00%3A00%3A00%2B99%3A99',
      '%7B%22%24gt%22%3A%22%22%7D',
      '-1',
      '1e309',
      'NaN',
      '0x10',
      '..%2F..%2Fetc',
      'x'.repeat(5000),
    ];
    let requests = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      const parameters = (operations.get?.parameters ?? []).filter((parameter) => parameter.in === 'query');
      if (path.includes('{')) continue; // path parameters are covered by the admin tests
      const client = path.startsWith('/admin/') ? admin : program;
      for (const { name } of parameters) {
        for (const query of [...HOSTILE.map((value) => `${name}=${value}`), `${name}=a&${name}=b`, `${name}[$ne]=x`]) {
          const response = await client.get(`${path}?${query}`);
          requests += 1;
          expect({ path, query: query.slice(0, 80), serverError: response.status >= 500 }).toEqual({
            path,
            query: query.slice(0, 80),
            serverError: false,
          });
        }
      }
    }
    expect(requests).toBeGreaterThan(300);
    // Hundreds of requests, one after the other: over a minute on a busy machine (CI), so not jest's default bound.
  }, 180_000);
});

type SchemaObject = {
  $ref?: string;
  format?: string;
  properties?: Record<string, SchemaObject>;
  anyOf?: SchemaObject[];
  allOf?: SchemaObject[];
  oneOf?: SchemaObject[];
};
type OpenApiDocument = {
  paths: Record<
    string,
    Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: SchemaObject }> } }>
  >;
  components: { schemas: Record<string, SchemaObject> };
};

/** `METHOD path field` for every date-time property of every JSON request body in the document. */
function dateFieldsOfRequestBodies(document: OpenApiDocument): string[] {
  const resolve = (schema: SchemaObject): SchemaObject =>
    schema.$ref ? resolve(document.components.schemas[schema.$ref.split('/').pop() as string] as SchemaObject) : schema;
  const isDate = (schema: SchemaObject): boolean => {
    const resolved = resolve(schema);
    return (
      resolved.format === 'date-time' || [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? []), ...(resolved.allOf ?? [])].some(isDate)
    );
  };
  const fields: string[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const schema = operation.requestBody?.content['application/json']?.schema;
      if (!schema) continue;
      const body = resolve(schema);
      const variants = [body, ...(body.allOf ?? []), ...(body.anyOf ?? [])].map(resolve);
      for (const variant of variants) {
        for (const [name, property] of Object.entries(variant.properties ?? {})) {
          if (isDate(property)) fields.push(`${method.toUpperCase()} ${path} ${name}`);
        }
      }
    }
  }
  return [...new Set(fields)];
}

async function adminKeyHeader() {
  const { key } = await system.createProgram();
  return { authorization: `Bearer ${key}` };
}
