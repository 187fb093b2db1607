import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  AffiliateApiError,
  createAffiliateClient,
  verifyWebhook,
  WebhookVerificationError,
  type AffiliateClientOptions,
} from '@affiliate/client';
import { eventually } from '@affiliate/platform/testing';
import { ADMIN_TOKEN, ROOT, Subscriber, System } from '../harness';

/** The SDK (@affiliate/client) against the running system: as a packed tarball installed in a new project, and each of its features. */
const run = promisify(execFile);
let system: System;
const subscriber = new Subscriber();

beforeAll(async () => {
  system = await System.start();
}, 180_000);
afterAll(async () => {
  await subscriber.stop();
  await system?.stop();
});

/** What one attempt sent and got, seen by the fetch the SDK calls under its retries (the real one). */
type Attempt = {
  method: string;
  path: string;
  idempotencyKey: string | null;
  status?: number;
  retryAfter?: string | null;
  sentAt: number;
  answeredAt?: number;
};

function observedClient(apiKey: string, options: Partial<AffiliateClientOptions> = {}) {
  const attempts: Attempt[] = [];
  const fetchSeen = async (request: Request) => {
    const attempt: Attempt = {
      method: request.method,
      path: new URL(request.url).pathname,
      idempotencyKey: request.headers.get('idempotency-key'),
      sentAt: Date.now(),
    };
    attempts.push(attempt);
    const response = await fetch(request);
    Object.assign(attempt, { status: response.status, retryAfter: response.headers.get('retry-after'), answeredAt: Date.now() });
    return response;
  };
  return { client: createAffiliateClient({ baseUrl: system.gatewayUrl, apiKey, fetch: fetchSeen as typeof fetch, ...options }), attempts };
}

/** The ids of every object an SDK list yields, in its order (newest first). */
async function idsOf(list: AsyncIterable<{ id: string }>): Promise<string[]> {
  const ids: string[] = [];
  for await (const each of list) ids.push(each.id);
  return ids;
}

test('the packed SDK installs into a new project and completes the journey: affiliate, coupon and code, sales, every sale by auto-paging, one webhook verified', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sdk-scratch-'));
  // npm pack runs prepack (tsc -b): the tarball holds the built dist/ and nothing of the repository besides.
  const packed = await run('npm', ['pack', '--pack-destination', scratch, '--json'], {
    cwd: join(ROOT, 'clients/typescript'),
    timeout: 240_000,
  });
  const [tarball] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  expect(
    tarball?.files
      .map((file) => file.path)
      .filter((path) => !/^dist\/.+\.(js|d\.ts)$/.test(path))
      .sort(),
  ).toEqual(['CHANGELOG.md', 'README.md', 'package.json']);
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'sdk-scratch', private: true }));
  // Its one runtime dependency (openapi-fetch) comes from the npm cache, or the registry.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(scratch, tarball?.filename ?? '')], {
    cwd: scratch,
    timeout: 240_000,
  });

  copyFileSync(join(ROOT, 'system-tests/sdk-journey/journey.ts'), join(scratch, 'journey.ts'));
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'node16',
        moduleResolution: 'node16',
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
      },
      files: ['journey.ts'],
    }),
  );
  // Type-checked against the .d.ts files the package ships, as an integrator's editor would.
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', scratch], { cwd: scratch, timeout: 120_000 });

  const { key } = await system.createProgram();
  const { stdout } = await run(process.execPath, ['journey.js'], {
    cwd: scratch,
    timeout: 120_000,
    env: { ...process.env, GATEWAY_URL: system.gatewayUrl, API_KEY: key },
  });
  const result = JSON.parse(stdout) as {
    recorded: string[];
    listed: string[];
    refused: { status: number; requestId: string };
    event: { id: string; type: string; webhookId: string };
    tampered: string;
  };
  expect(result.listed).toEqual([...result.recorded].reverse());
  expect(result.refused).toMatchObject({ status: 400, requestId: expect.any(String) });
  expect(result.event).toEqual({ id: result.event.webhookId, type: 'sale.created', webhookId: expect.any(String) });
  expect(result.tampered).toBe('SIGNATURE_MISMATCH');
}, 600_000);

test('every POST carries an Idempotency-Key, a GET none; a key of your own replays the first answer instead of recording twice', async () => {
  const { key } = await system.createProgram();
  const { client, attempts } = observedClient(key);
  const affiliate = await client.affiliates.create({ firstName: 'Key', lastName: 'Holder', email: 'key@example.com' });
  await client.affiliates.retrieve({ id: affiliate.id });
  expect(attempts.map(({ method, idempotencyKey }) => ({ method, keyed: idempotencyKey !== null }))).toEqual([
    { method: 'POST', keyed: true },
    { method: 'GET', keyed: false },
  ]);
  expect(attempts[0]?.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

  const first = await client.referrals.create({ affiliateId: affiliate.id, email: 'buyer@example.com' }, { idempotencyKey: 'order-1042' });
  const again = await client.referrals.create({ affiliateId: affiliate.id, email: 'buyer@example.com' }, { idempotencyKey: 'order-1042' });
  expect(again.id).toBe(first.id);
  expect(await idsOf(client.referrals.list())).toEqual([first.id]);
});

test("list follows the Link header through every page with the filters kept and stops asking when the loop stops; paginate pages any list, the admin API's too", async () => {
  const { key } = await system.createProgram();
  const { client, attempts } = observedClient(key);
  const [ada, bob] = [
    await client.affiliates.create({ firstName: 'Ada', lastName: 'One', email: 'ada@example.com' }),
    await client.affiliates.create({ firstName: 'Bob', lastName: 'Two', email: 'bob@example.com' }),
  ];
  const adaReferrals: string[] = [];
  for (const n of [1, 2, 3, 4, 5])
    adaReferrals.push((await client.referrals.create({ affiliateId: ada?.id ?? '', email: `ada-${n}@example.com` })).id);
  await client.referrals.create({ affiliateId: bob?.id ?? '', email: 'bob-1@example.com' });

  attempts.length = 0;
  expect(await idsOf(client.referrals.list({ affiliateId: ada?.id, limit: 2 }))).toEqual([...adaReferrals].reverse());
  expect(attempts.filter((attempt) => attempt.method === 'GET')).toHaveLength(3);

  attempts.length = 0;
  for await (const referral of client.referrals.list({ limit: 2 })) {
    expect(referral.id).toBeDefined();
    break;
  }
  expect(attempts).toHaveLength(1);

  // paginate: any paged path, the admin API's too (with the operator's token).
  const operator = observedClient(ADMIN_TOKEN);
  const programs = await idsOf(operator.client.paginate('/admin/v1/programs', { limit: 1 }));
  const { data: onePage } = await operator.client.GET('/admin/v1/programs', { params: { query: { limit: 1000 } } });
  expect(programs).toEqual(onePage?.map((program) => program.id));
  expect(operator.attempts.length).toBeGreaterThan(2);
});

test('a list that does not page is iterated all the same, in one request: publishable keys, event types, the affiliate report', async () => {
  const { key } = await system.createProgram();
  const { client, attempts } = observedClient(key);
  const { data: created } = await client.POST('/api/v1/publishable-keys');
  await client.affiliates.create({ firstName: 'Row', lastName: 'Holder', email: 'row@example.com' });

  attempts.length = 0;
  expect(await idsOf(client.publishableKeys.list())).toEqual([created?.id]);
  const types: string[] = [];
  for await (const eventType of client.eventTypes.list()) types.push(eventType.type);
  expect(types).toContain('sale.created');
  const period = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString() };
  const rows: unknown[] = [];
  for await (const row of client.affiliateReports.list(period)) rows.push(row);
  expect(attempts.map(({ method, path }) => `${method} ${path}`)).toEqual([
    'GET /api/v1/publishable-keys',
    'GET /api/v1/event-types',
    'GET /api/v1/reports/affiliates',
  ]);
  const { data: report } = await client.GET('/api/v1/reports/affiliates', { params: { query: period } });
  expect(rows).toEqual(report);
});

test('an error answer is thrown as AffiliateApiError with its status, message and request id (code and param when the server sends them), and a 400 is not retried', async () => {
  const { key } = await system.createProgram();
  const { client, attempts } = observedClient(key);
  const error: unknown = await client.sales.create({ promoCode: 'NO-SUCH-CODE', totalEarned: 10 }).catch((thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(AffiliateApiError);
  const apiError = error as AffiliateApiError;
  const body = apiError.body as { error: string; code?: string; param?: string | null; requestId?: string };
  expect({ status: apiError.status, message: apiError.message, code: apiError.code, param: apiError.param }).toEqual({
    status: 400,
    message: body.error,
    code: body.code,
    param: body.param,
  });
  expect(apiError.requestId).toEqual(expect.any(String));
  expect(attempts).toHaveLength(1);

  const missing: unknown = await client.sales.retrieve({ id: '00000000-0000-4000-8000-000000000000' }).catch((thrown: unknown) => thrown);
  expect(missing).toMatchObject({ name: 'AffiliateApiError', status: 404 });
});

test('a 429 is waited out for as long as its Retry-After says, then the same call succeeds', async () => {
  const { key } = await system.createProgram({ rateLimit: { points: 1, duration: 5 } });
  const { client, attempts } = observedClient(key, { maxRetries: 3 });
  // One request per 5 s: the next one within the window is refused (a slow first answer just takes one more).
  for (let call = 0; call < 5 && !attempts.some((attempt) => attempt.status === 429); call++)
    expect(await client.coupons.retrieve()).toEqual([]);
  const limited = attempts.findIndex((attempt) => attempt.status === 429);
  expect(limited).toBeGreaterThan(0);
  const [refused, retried] = [attempts[limited], attempts[limited + 1]];
  const retryAfterMs = Number(refused?.retryAfter) * 1000;
  expect(retryAfterMs).toBeGreaterThan(0);
  // A timer never fires early; a few ms of clock rounding between two Date.now() readings are allowed.
  expect((retried?.sentAt ?? 0) - (refused?.answeredAt ?? 0)).toBeGreaterThanOrEqual(retryAfterMs - 20);
}, 60_000);

test('a 503 from a service that is down is retried with the same Idempotency-Key until it is back: the sale is recorded once', async () => {
  const { key } = await system.createProgram();
  const { client, attempts } = observedClient(key, { maxRetries: 150, initialRetryDelayMs: 100, maxRetryDelayMs: 1000 });
  const affiliate = await client.affiliates.create({ firstName: 'Down', lastName: 'Time', email: 'down@example.com' });
  const referral = await client.referrals.create({ affiliateId: affiliate.id, email: 'patient@example.com' });
  attempts.length = 0;

  await system.kill('sale');
  const recording = client.sales.create({ referralId: referral.id, totalEarned: 25, externalId: 'order-during-outage' });
  await eventually(() => expect(attempts.some((attempt) => attempt.status === 503)).toBe(true), 60_000);
  await system.launch('sale');
  await system.waitReady('sale');
  const sale = await recording;

  expect(new Set(attempts.map((attempt) => attempt.idempotencyKey)).size).toBe(1);
  expect(attempts.at(-1)?.status).toBe(200);
  expect(await idsOf(client.sales.list())).toEqual([sale.id]);
}, 180_000);

test('a POST whose connection fails is sent again with its Idempotency-Key once the gateway is back: one affiliate', async () => {
  const { key } = await system.createProgram();
  const { client, attempts } = observedClient(key, { maxRetries: 150, initialRetryDelayMs: 100, maxRetryDelayMs: 1000 });
  await system.kill('gateway');
  const creating = client.affiliates.create({ firstName: 'Net', lastName: 'Split', email: 'net@example.com' });
  await eventually(() => expect(attempts.length).toBeGreaterThanOrEqual(2), 30_000);
  await system.launch('gateway');
  await system.waitReady('gateway');
  const affiliate = await creating;

  expect(attempts.filter((attempt) => attempt.status === undefined).length).toBeGreaterThanOrEqual(1);
  expect(new Set(attempts.map((attempt) => attempt.idempotencyKey)).size).toBe(1);
  expect(await idsOf(client.affiliates.list())).toEqual([affiliate.id]);
}, 180_000);

test('verifyWebhook accepts a real delivery as received and refuses it re-serialised, altered, re-timed, under another secret, or out of tolerance', async () => {
  const { key } = await system.createProgram();
  const client = createAffiliateClient({ baseUrl: system.gatewayUrl, apiKey: key });
  const endpoint = await client.webhookEndpoints.create({ url: await subscriber.start(), eventTypes: ['affiliate.created'] });
  const secret = endpoint.secret ?? '';
  const affiliate = await client.affiliates.create({ firstName: 'Hook', lastName: 'Ed', email: 'hook@example.com' });
  const delivery = await eventually(() => {
    const found = subscriber.events('affiliate.created').find((each) => each.body.data.id === affiliate.id);
    if (!found) throw new Error('no affiliate.created delivery yet');
    return found;
  }, 30_000);
  const headers = delivery.headers as Record<string, string>;

  const event = verifyWebhook(delivery.rawBody, headers, secret);
  expect(event).toMatchObject({ id: headers['webhook-id'], event: 'affiliate.created', data: { id: affiliate.id } });
  expect(verifyWebhook(Buffer.from(delivery.rawBody), new Headers(headers), ['whsec_b2xkLXNlY3JldC1vbGQtc2VjcmV0', secret])).toEqual(event);

  const failureOf = (attempt: () => unknown) => {
    try {
      attempt();
    } catch (error) {
      return error instanceof WebhookVerificationError ? error.failure : error;
    }
    return 'accepted';
  };
  const signedAt = Number(headers['webhook-timestamp']);
  expect({
    reserialised: failureOf(() => verifyWebhook(JSON.stringify(JSON.parse(delivery.rawBody), null, 2), headers, secret)),
    altered: failureOf(() => verifyWebhook(delivery.rawBody.replace('Hook', 'Hack'), headers, secret)),
    retimed: failureOf(() => verifyWebhook(delivery.rawBody, { ...headers, 'webhook-timestamp': String(signedAt + 1) }, secret)),
    otherSecret: failureOf(() => verifyWebhook(delivery.rawBody, headers, 'whsec_b3RoZXItc2VjcmV0LW9mLWFub3RoZXI=')),
    tooLate: failureOf(() =>
      verifyWebhook(delivery.rawBody, headers, secret, { toleranceSeconds: 60, now: new Date((signedAt + 61) * 1000) }),
    ),
    unsigned: failureOf(() => verifyWebhook(delivery.rawBody, { ...headers, 'webhook-signature': '' }, secret)),
  }).toEqual({
    reserialised: 'SIGNATURE_MISMATCH',
    altered: 'SIGNATURE_MISMATCH',
    retimed: 'SIGNATURE_MISMATCH',
    otherSecret: 'SIGNATURE_MISMATCH',
    tooLate: 'TIMESTAMP_SKEW',
    unsigned: 'MALFORMED_HEADER',
  });
  expect(() => verifyWebhook(JSON.parse(delivery.rawBody) as never, headers, secret)).toThrow(/raw body/);
});
