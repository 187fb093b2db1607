import { randomUUID } from 'node:crypto';
import { ConfigError } from '@affiliate/platform';
import { eventually } from '@affiliate/platform/testing';
import { gatewaySettingsFromEnv } from '../src/config';
import { adminAuth, allUpstreams, bearer, spawnGateway, startEchoUpstream, type EchoUpstream, type GatewayProcess } from './support';

/**
 * The gateway's connections to a service are one pool shared by every program. A program whose
 * requests stall must neither crash the gateway (an uncaught exception is a bug: the process is
 * what is under test, so the compiled gateway runs as its own process; build first) nor take the
 * pool from the other programs. A pool of 4 connections and a cap of 2 requests per program make
 * the pool run out at once.
 */
let upstream: EchoUpstream;
let gateway: GatewayProcess;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  const upstreams = Object.entries(allUpstreams(upstream.url)).map(([name, url]) => [`${name.toUpperCase().replace(/-/g, '_')}_URL`, url]);
  gateway = await spawnGateway({
    ...Object.fromEntries(upstreams),
    UPSTREAM_MAX_SOCKETS: '4',
    UPSTREAM_MAX_IN_FLIGHT_PER_PROGRAM: '2',
    UPSTREAM_TIMEOUT_MS: '1500',
    RATE_LIMIT_POINTS: '10000',
  });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

type Answer = { status: number; retryAfter: string | null; body: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(path: string, init: RequestInit & { giveUpAfterMs?: number } = {}): Promise<Answer | 'gave up'> {
  try {
    const response = await fetch(`${gateway.url}${path}`, { ...init, signal: AbortSignal.timeout(init.giveUpAfterMs ?? 30_000) });
    const text = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: text ? JSON.parse(text) : null };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return 'gave up';
    throw error;
  }
}

async function createProgram(): Promise<{ programId: string; key: string }> {
  const json = { ...adminAuth, 'content-type': 'application/json' };
  const program = (await call('/admin/v1/programs', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ name: `pool ${randomUUID().slice(0, 6)}` }),
  })) as Answer;
  const key = (await call(`/admin/v1/programs/${program.body.id}/api-keys`, { method: 'POST', headers: adminAuth })) as Answer;
  return { programId: program.body.id, key: key.body.key };
}

const testSend = (key: string, giveUpAfterMs?: number) =>
  call('/api/v1/webhook-endpoints/test', {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ webhookEndpointId: randomUUID() }),
    giveUpAfterMs,
  });

const stillUp = () => {
  expect(gateway.output()).not.toMatch(/ERR_HTTP_HEADERS_SENT|uncaught/i);
  expect(gateway.exitCode()).toBeNull();
};

test('requests that wait for a pooled connection, stall upstream, or whose clients give up never crash the gateway; it keeps answering', async () => {
  // Several programs, so the per-program cap lets enough requests through to fill the pool and queue behind it.
  const stalled = await Promise.all(Array.from({ length: 6 }, () => createProgram()));
  const other = await createProgram();
  // The subscriber (here the whole service) accepts the connection and never answers.
  upstream.answerWith(null);

  const sends = stalled.flatMap((program, index) => [testSend(program.key, index % 2 === 0 ? 300 : undefined), testSend(program.key)]);
  const answers = await Promise.all(sends);
  upstream.answerWith(200);

  // Every client that waited got an answer, 503 with a message saying what happened, and nothing else.
  for (const answer of answers) {
    if (answer === 'gave up') continue;
    expect(answer.status).toBe(503);
    expect(answer.body.error).toMatch(/webhook-dispatcher|in flight/);
  }
  expect(answers.filter((answer) => answer !== 'gave up').length).toBeGreaterThan(0);
  stillUp();
  // And it goes on serving: another program, the same service and another one.
  const coupons = await call('/api/v1/coupons', { headers: bearer(other.key) });
  expect(coupons).toMatchObject({ status: 200 });
  const endpoints = await call('/api/v1/webhook-endpoints', { headers: bearer(other.key) });
  expect(endpoints).toMatchObject({ status: 200 });
  stillUp();
});

test("one program saturating a slow route cannot take the shared pool: another program's requests to the same service keep succeeding", async () => {
  const greedy = await createProgram();
  const other = await createProgram();
  upstream.hangFor(greedy.programId);
  try {
    const flood = Array.from({ length: 12 }, () => testSend(greedy.key));
    // While the greedy program's requests hang, the other program is served by the same service.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect(await call('/api/v1/webhook-endpoints', { headers: bearer(other.key) })).toMatchObject({ status: 200 });
    }
    const answers = (await Promise.all(flood)) as Answer[];
    const refused = answers.filter((answer) => answer.status === 503 && /in flight/.test(answer.body.error));
    // Beyond the cap the program is told at once to come back later.
    expect(refused.length).toBeGreaterThanOrEqual(12 - 2);
    for (const answer of refused) {
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(answer.body.code).toBe('service_busy');
    }
    stillUp();
  } finally {
    upstream.hangFor(null);
  }
});

test('a request that waits for a pooled connection past the deadline is answered 503 with Retry-After naming the wait, and the gateway stays up', async () => {
  const holders = [await createProgram(), await createProgram()];
  const waiter = await createProgram();
  // Two programs take all 4 connections to the service with answers that start and never end (a long read).
  upstream.trickleFor(holders.map((holder) => holder.programId));
  const taken = new AbortController();
  try {
    const streams = await Promise.all(
      holders.flatMap((holder) =>
        [1, 2].map(() => fetch(`${gateway.url}/api/v1/webhook-deliveries`, { headers: bearer(holder.key), signal: taken.signal })),
      ),
    );
    expect(streams.map((stream) => stream.status)).toEqual([200, 200, 200, 200]);

    // Past the deadline (1.5 s) no connection came free: answered, not left waiting.
    const waited = (await call('/api/v1/webhook-endpoints', { headers: bearer(waiter.key) })) as Answer;
    expect(waited).toMatchObject({
      status: 503,
      body: { error: 'No connection to the webhook-dispatcher service became free within 1500 ms; retry later', code: 'service_busy' },
    });
    expect(Number(waited.retryAfter)).toBeGreaterThan(0);
    stillUp();
  } finally {
    taken.abort();
    upstream.trickleFor([]);
  }
  // The connections given back, the same program is served.
  await eventually(async () =>
    expect(await call('/api/v1/webhook-endpoints', { headers: bearer(waiter.key) })).toMatchObject({ status: 200 }),
  );
  stillUp();
});

test('UPSTREAM_MAX_SOCKETS and UPSTREAM_MAX_IN_FLIGHT_PER_PROGRAM are validated at start, with defaults that keep a program well below the pool', () => {
  const defaults = gatewaySettingsFromEnv({});
  expect(defaults).toMatchObject({ upstreamMaxSockets: 256, upstreamMaxInFlightPerProgram: 64 });
  for (const name of ['UPSTREAM_MAX_SOCKETS', 'UPSTREAM_MAX_IN_FLIGHT_PER_PROGRAM']) {
    for (const bad of ['0', '-3', 'many', '2.5']) {
      expect(() => gatewaySettingsFromEnv({ [name]: bad })).toThrow(ConfigError);
      expect(() => gatewaySettingsFromEnv({ [name]: bad })).toThrow(new RegExp(name));
    }
  }
});
