import { get as httpGet } from 'node:http';
import { API_OPERATIONS, API_SCOPES, scopesOf, type ApiScope } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { GATEWAY_ROUTES, ROUTE_TABLE } from '../src/proxy/route-table';
import { adminAuth, allUpstreams, bearer, createProgramWithKey, startEchoUpstream, startGateway, type EchoUpstream } from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url) });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

const api = () => request(gateway.url);
type Method = 'get' | 'post' | 'put' | 'delete';

async function keyWith(programId: string, scopes?: ApiScope[]): Promise<{ id: string; key: string }> {
  const created = await api()
    .post(`/admin/v1/programs/${programId}/api-keys`)
    .set(adminAuth)
    .send(scopes ? { scopes } : {})
    .expect(200);
  return { id: created.body.id, key: created.body.key };
}

const forwarded = (since: number) => upstream.received.slice(since).filter((received) => received.url !== '/healthz');

test('the route table walked with each scope: every public operation is allowed or refused 403 as its table entry says, and nothing refused reaches a service', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const operations = API_OPERATIONS.filter((operation) => !operation.admin && !operation.browser);
  expect(operations.length).toBeGreaterThan(40);
  for (const scope of API_SCOPES) {
    const { key } = await keyWith(programId, [scope]);
    for (const operation of operations) {
      const route = `${operation.method.toUpperCase()} ${operation.path} with a "${scope}" key`;
      const missing = scopesOf(operation).filter((needed) => needed !== scope);
      const before = upstream.received.length;
      const response = await api()
        [operation.method as Method](`/api/v1${operation.path}`)
        .set(bearer(key))
        .send(operation.method === 'get' ? undefined : {});
      // The console's team routes take a member's session: any API key is refused there (issue 32).
      if (operation.team) {
        expect({ route, status: response.status, code: response.body.code }).toEqual({ route, status: 403, code: 'team_session_required' });
        expect({ route, forwarded: forwarded(before) }).toEqual({ route, forwarded: [] });
      } else if (missing.length > 0) {
        expect({ route, status: response.status }).toEqual({ route, status: 403 });
        // DELETE /coupons and PUT /referrals number their errors (spec): the text is then in `message`.
        const message = String(response.body.message ?? response.body.error);
        for (const name of missing) expect({ route, message }).toEqual({ route, message: expect.stringContaining(`"${name}"`) });
        expect({ route, forwarded: forwarded(before) }).toEqual({ route, forwarded: [] });
      } else {
        expect({ route, refused: response.status === 403 }).toEqual({ route, refused: false });
        const segment = operation.path.split('/')[1] ?? '';
        if (Object.hasOwn(ROUTE_TABLE, segment)) expect({ route, forwarded: forwarded(before).length }).toEqual({ route, forwarded: 1 });
      }
    }
  }
});

test('the walk covers the whole gateway route table: every path segment it routes has operations in the scope table', () => {
  const walked = new Set(
    API_OPERATIONS.filter((operation) => !operation.admin && !operation.browser).map((operation) => operation.path.split('/')[1]),
  );
  const routed = [...Object.keys(ROUTE_TABLE), ...Object.keys(GATEWAY_ROUTES).filter((segment) => segment !== 'browser')];
  expect(routed.filter((segment) => !walked.has(segment))).toEqual([]);
});

test('a path or method the scope table does not name is open to full keys only: any narrower key is refused 403 naming every scope, and nothing reaches a service', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const unnamed: Array<[Method, string]> = [
    ['get', '/api/v1/coupons/unknown-thing'],
    ['post', '/api/v1/event-types'],
    ['delete', '/api/v1/webhook-deliveries'],
  ];
  const narrower = [...API_SCOPES.map((scope) => [scope]), API_SCOPES.filter((scope) => scope !== 'webhook_secrets')];
  for (const scopes of narrower) {
    const { key } = await keyWith(programId, scopes);
    for (const [method, path] of unnamed) {
      const before = upstream.received.length;
      const route = `${method.toUpperCase()} ${path} with a ${scopes.join('+')} key`;
      const response = await api()[method](path).set(bearer(key));
      expect({ route, status: response.status }).toEqual({ route, status: 403 });
      for (const missing of API_SCOPES.filter((scope) => !scopes.includes(scope)))
        expect({ route, error: response.body.error }).toEqual({ route, error: expect.stringContaining(`"${missing}"`) });
      expect({ route, forwarded: forwarded(before) }).toEqual({ route, forwarded: [] });
    }
  }
  for (const full of [await keyWith(programId), await keyWith(programId, [...API_SCOPES])]) {
    for (const [method, path] of unnamed) {
      const before = upstream.received.length;
      const response = await api()[method](path).set(bearer(full.key));
      expect({ path, refused: response.status === 403 }).toEqual({ path, refused: false });
      expect({ path, forwarded: forwarded(before).length }).toEqual({ path, forwarded: 1 });
    }
  }
});

test('a key created without scopes has every scope, as every key made before scopes existed; scopes given are kept and listed', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const full = await keyWith(programId);
  const stored = await gateway.connection.collection('api_keys').findOne({ _id: full.id as never });
  expect(stored?.scopes).toBeUndefined();
  for (const path of ['/api/v1/payouts/export', '/api/v1/webhook-endpoints/secret', '/api/v1/coupons'])
    await api().get(path).set(bearer(full.key)).expect(200);
  await api().put('/api/v1/payouts').set(bearer(full.key)).send({}).expect(200);

  const readOnly = await keyWith(programId, ['read', 'finance']);
  const listed = await api().get(`/admin/v1/programs/${programId}/api-keys`).set(adminAuth).expect(200);
  expect(listed.body.map((key: { id: string; scopes: string[] }) => ({ id: key.id, scopes: key.scopes }))).toEqual([
    { id: readOnly.id, scopes: ['read', 'finance'] },
    { id: full.id, scopes: ['read', 'write', 'finance', 'webhook_secrets'] },
    expect.objectContaining({ scopes: ['read', 'write', 'finance', 'webhook_secrets'] }),
  ]);
});

test('unknown, repeated or no scopes are refused with 400 naming the field, and no key is made', async () => {
  const { programId } = await createProgramWithKey(gateway);
  for (const body of [{ scopes: ['admin'] }, { scopes: ['read', 'read'] }, { scopes: [] }, { scopes: 'read' }]) {
    const refused = await api().post(`/admin/v1/programs/${programId}/api-keys`).set(adminAuth).send(body).expect(400);
    expect(refused.body.error).toMatch(/scopes/);
  }
  const listed = await api().get(`/admin/v1/programs/${programId}/api-keys`).set(adminAuth).expect(200);
  expect(listed.body).toHaveLength(1);
});

test('rotating a signing secret needs webhook_secrets; changing anything else of an endpoint needs write only', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const { key } = await keyWith(programId, ['write']);
  const endpointId = '00000000-0000-4000-8000-000000000001';
  await api().put('/api/v1/webhook-endpoints').set(bearer(key)).send({ webhookEndpointId: endpointId, active: false }).expect(200);
  const before = upstream.received.length;
  const refused = await api()
    .put('/api/v1/webhook-endpoints')
    .set(bearer(key))
    .send({ webhookEndpointId: endpointId, rotateSecret: true })
    .expect(403);
  expect(refused.body.error).toContain('"webhook_secrets"');
  expect(forwarded(before)).toEqual([]);
});

type ProgramAudit = {
  action: string;
  operation: string;
  status: number;
  aborted: boolean;
  requestId: string | null;
  actor: { apiKeyId: string; apiKeyPrefix: string };
};

/** The program's audit record as a key of it reads it, once it holds `count` records (they are written after each answer). */
const auditRecords = (key: string, count: number) =>
  eventually(async () => {
    const response = await api().get('/api/v1/audit-records').set(bearer(key)).expect(200);
    expect(response.body).toHaveLength(count);
    return response.body as ProgramAudit[];
  });
const summary = ({ action, operation, status, actor }: ProgramAudit) => ({ action, operation, status, key: actor.apiKeyId });

test("revealing a secret, exporting bank details and changing a payout's status are answered no-store and kept in the program's audit record, refusals included; no other program sees them", async () => {
  const { programId } = await createProgramWithKey(gateway);
  const other = await createProgramWithKey(gateway);
  const finance = await keyWith(programId, ['finance']);
  const secrets = await keyWith(programId, ['webhook_secrets']);
  const reader = await keyWith(programId, ['read']);
  const writer = await keyWith(programId, ['write']);

  const acts = [
    await api()
      .get('/api/v1/webhook-endpoints/secret')
      .query({ webhookEndpointId: '00000000-0000-4000-8000-000000000002' })
      .set(bearer(secrets.key))
      .set('x-request-id', 'reveal-1'),
    await api().get('/api/v1/payouts/export').query({ payoutId: '00000000-0000-4000-8000-000000000003' }).set(bearer(finance.key)),
    await api().get('/api/v1/payouts').set(bearer(finance.key)).set('accept', 'text/csv'),
    await api()
      .put('/api/v1/payouts')
      .set(bearer(finance.key))
      .send({ payoutId: '00000000-0000-4000-8000-000000000003', status: 'FAILED' }),
    await api()
      .put('/api/v1/webhook-endpoints')
      .set(bearer(writer.key))
      .send({ webhookEndpointId: '00000000-0000-4000-8000-000000000002', rotateSecret: true }),
    await api().get('/api/v1/payouts/export').query({ payoutId: '00000000-0000-4000-8000-000000000003' }).set(bearer(reader.key)),
  ];
  expect(acts.map((response) => [response.status, response.headers['cache-control']])).toEqual([
    [200, 'no-store'],
    [200, 'no-store'],
    [200, 'no-store'],
    [200, 'no-store'],
    [403, 'no-store'],
    [403, 'no-store'],
  ]);
  // The JSON list shows the last 4 characters of an IBAN only: not recorded, still not cached.
  const list = await api().get('/api/v1/payouts').set(bearer(finance.key)).expect(200);
  expect(list.headers['cache-control']).toBe('no-store');

  const records = await auditRecords(reader.key, 6);
  expect(records.map(summary)).toEqual([
    { action: 'bank_details.exported', operation: 'GET /api/v1/payouts/export', status: 403, key: reader.id },
    { action: 'webhook_secret.revealed', operation: 'PUT /api/v1/webhook-endpoints', status: 403, key: writer.id },
    { action: 'payout.status_changed', operation: 'PUT /api/v1/payouts', status: 200, key: finance.id },
    { action: 'bank_details.exported', operation: 'GET /api/v1/payouts', status: 200, key: finance.id },
    { action: 'bank_details.exported', operation: 'GET /api/v1/payouts/export', status: 200, key: finance.id },
    { action: 'webhook_secret.revealed', operation: 'GET /api/v1/webhook-endpoints/secret', status: 200, key: secrets.id },
  ]);
  expect(records[5]).toMatchObject({ requestId: 'reveal-1', actor: { apiKeyPrefix: secrets.key.slice(0, 12) } });
  expect(JSON.stringify(records)).not.toContain(secrets.key);

  const page = await api().get('/api/v1/audit-records?limit=2').set(bearer(reader.key)).expect(200);
  expect(page.body).toHaveLength(2);
  expect(page.headers.link).toMatch(/^<\/api\/v1\/audit-records\?limit=2&startingAfter=[0-9a-f-]+>; rel="next"$/);
  await api().get('/api/v1/audit-records').set(bearer(other.key)).expect(200, []);
});

test('a case variant of a sensitive path is judged as the operation it names: refused without its scope, otherwise answered no-store and recorded', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const full = await keyWith(programId);
  const reader = await keyWith(programId, ['read']);
  const variants = ['/api/v1/webhook-endpoints/SECRET', '/api/v1/payouts/Export'];
  for (const path of variants) {
    const before = upstream.received.length;
    const refused = await api().get(path).set(bearer(reader.key));
    expect({ path, status: refused.status, cacheControl: refused.headers['cache-control'] }).toEqual({
      path,
      status: 403,
      cacheControl: 'no-store',
    });
    expect({ path, forwarded: forwarded(before) }).toEqual({ path, forwarded: [] });
  }
  for (const path of variants) {
    const answered = await api().get(path).set(bearer(full.key));
    expect({ path, cacheControl: answered.headers['cache-control'] }).toEqual({ path, cacheControl: 'no-store' });
  }
  const records = await auditRecords(reader.key, 4);
  expect(records.map(({ action, operation, actor }) => ({ action, operation, key: actor.apiKeyId }))).toEqual([
    { action: 'bank_details.exported', operation: 'GET /api/v1/payouts/Export', key: full.id },
    { action: 'webhook_secret.revealed', operation: 'GET /api/v1/webhook-endpoints/SECRET', key: full.id },
    { action: 'bank_details.exported', operation: 'GET /api/v1/payouts/Export', key: reader.id },
    { action: 'webhook_secret.revealed', operation: 'GET /api/v1/webhook-endpoints/SECRET', key: reader.id },
  ]);
});

test("changing an affiliate's bank details (payoutDetails) needs finance as well as write, and is kept in the program's audit record without the IBAN", async () => {
  const { programId } = await createProgramWithKey(gateway);
  const writer = await keyWith(programId, ['write']);
  const finance = await keyWith(programId, ['finance']);
  const both = await keyWith(programId, ['write', 'finance']);
  const reader = await keyWith(programId, ['read']);
  const affiliateId = '00000000-0000-4000-8000-000000000004';
  const iban = 'DE89370400440532013000';
  const bankDetails = { affiliateId, payoutDetails: { method: 'BANK_TRANSFER', accountHolder: 'Ada Lovelace', iban } };

  const before = upstream.received.length;
  const refused = await api().put('/api/v1/affiliates').set(bearer(writer.key)).send(bankDetails).expect(403);
  expect(refused.body.error).toContain('"finance"');
  const cleared = await api().put('/api/v1/affiliates').set(bearer(writer.key)).send({ affiliateId, payoutDetails: null }).expect(403);
  expect(cleared.body.error).toContain('"finance"');
  const withoutWrite = await api().put('/api/v1/affiliates').set(bearer(finance.key)).send(bankDetails).expect(403);
  expect(withoutWrite.body.error).toContain('"write"');
  expect(forwarded(before)).toEqual([]);

  // Anything else of an affiliate needs write only, and is no bank-details change.
  await api().put('/api/v1/affiliates').set(bearer(writer.key)).send({ affiliateId, firstName: 'Ada' }).expect(200);
  const changed = await api().put('/api/v1/affiliates').set(bearer(both.key)).send(bankDetails).expect(200);
  expect(changed.headers['cache-control']).toBe('no-store');

  const records = await auditRecords(reader.key, 3);
  const change = { action: 'bank_details.changed', operation: 'PUT /api/v1/affiliates' };
  // Newest first: the change made, then the two refusals (set and clear).
  expect(records.map(summary)).toEqual([
    { ...change, status: 200, key: both.id },
    ...Array(2).fill({ ...change, status: 403, key: writer.id }),
  ]);
  expect(JSON.stringify(records)).not.toContain(iban);
  expect(JSON.stringify(records)).not.toContain(iban.slice(4, 16));
});

/** A JSON body as bytes the service's parser would once have read another way than the gateway: a UTF-8 byte-order mark, or UTF-16LE. */
const unreadableBodies = (body: object): Array<{ name: string; contentType: string; bytes: Buffer }> => [
  {
    name: 'a UTF-8 byte-order mark',
    contentType: 'application/json',
    bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(body), 'utf8')]),
  },
  { name: 'UTF-16LE', contentType: 'application/json; charset=utf-16le', bytes: Buffer.from(JSON.stringify(body), 'utf16le') },
];

test('a body the gateway cannot read as the service would (a byte-order mark, UTF-16LE) needs the sensitive scope: a write-only key is refused 403, nothing reaches a service, and the attempt is recorded', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const writer = await keyWith(programId, ['write']);
  const reader = await keyWith(programId, ['read']);
  const acts = [
    {
      path: '/api/v1/affiliates',
      scope: 'finance',
      body: {
        affiliateId: '00000000-0000-4000-8000-000000000005',
        payoutDetails: { method: 'BANK_TRANSFER', accountHolder: 'Mallory', iban: 'DE89370400440532013000' },
      },
    },
    {
      path: '/api/v1/webhook-endpoints',
      scope: 'webhook_secrets',
      body: { webhookEndpointId: '00000000-0000-4000-8000-000000000006', rotateSecret: true },
    },
  ];
  for (const act of acts) {
    for (const payload of unreadableBodies(act.body)) {
      const attempt = `PUT ${act.path} with ${payload.name}`;
      const before = upstream.received.length;
      // fetch sends the bytes as given (supertest would serialise a Buffer as JSON).
      const refused = await fetch(`${gateway.url}${act.path}`, {
        method: 'PUT',
        headers: { ...bearer(writer.key), 'content-type': payload.contentType },
        body: payload.bytes,
      });
      const error = ((await refused.json()) as { error: string }).error;
      expect({ attempt, status: refused.status, error }).toEqual({
        attempt,
        status: 403,
        error: expect.stringContaining(`"${act.scope}"`),
      });
      expect({ attempt, forwarded: forwarded(before) }).toEqual({ attempt, forwarded: [] });
    }
  }
  const records = await auditRecords(reader.key, 4);
  // Newest first: both refused rotations, then both refused bank-details changes.
  const refusals = (action: string, operation: string) => Array(2).fill({ action, operation, status: 403, key: writer.id });
  expect(records.map(summary)).toEqual([
    ...refusals('webhook_secret.revealed', 'PUT /api/v1/webhook-endpoints'),
    ...refusals('bank_details.changed', 'PUT /api/v1/affiliates'),
  ]);
});

test('a sensitive answer the client drops mid-stream is recorded all the same, once, marked aborted', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const finance = await keyWith(programId, ['finance']);
  const reader = await keyWith(programId, ['read']);
  // The upstream sends the CSV's first line and never the rest: the client leaves mid-answer.
  upstream.trickleFor([programId]);
  try {
    const firstChunk = await new Promise<string>((resolve, reject) => {
      const exporting = httpGet(
        `${gateway.url}/api/v1/payouts/export?payoutId=00000000-0000-4000-8000-000000000007`,
        { headers: bearer(finance.key) },
        (response) => {
          response.once('data', (chunk: Buffer) => {
            exporting.destroy();
            resolve(chunk.toString('utf8'));
          });
        },
      );
      exporting.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    });
    expect(firstChunk).toBe('name\n');
    const records = await auditRecords(reader.key, 1);
    expect(records.map((record) => ({ ...summary(record), aborted: record.aborted }))).toEqual([
      { action: 'bank_details.exported', operation: 'GET /api/v1/payouts/export', status: 200, key: finance.id, aborted: true },
    ]);
    // A finished answer is recorded once too, not aborted.
    await api()
      .get('/api/v1/payouts/export')
      .query({ payoutId: '00000000-0000-4000-8000-000000000007' })
      .set(bearer(reader.key))
      .expect(403);
    const both = await auditRecords(reader.key, 2);
    expect(both.map((record) => ({ status: record.status, aborted: record.aborted }))).toEqual([
      { status: 403, aborted: false },
      { status: 200, aborted: true },
    ]);
  } finally {
    upstream.trickleFor([]);
  }
});
