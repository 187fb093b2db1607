import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createConnection, createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TeamRole } from '@affiliate/contracts';
import { TEST_INTERNAL_TOKEN, testInfra, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import type { GatewaySettings } from '../src/config';
import { bootGateway, type RunningGateway } from '../src/gateway';
import { UPSTREAM_NAMES, type UpstreamName } from '../src/proxy/route-table';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
export const adminAuth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Nothing listens here: an upstream that is down. */
export const DEAD_UPSTREAM = 'http://127.0.0.1:9';

export function testGatewaySettings(overrides: Partial<GatewaySettings> = {}): GatewaySettings {
  const { mongoUrl, amqpUrl } = testInfra();
  return {
    port: 0,
    host: '127.0.0.1',
    metricsPort: 0,
    mongoUrl,
    dbName: uniqueName('test_gateway'),
    amqpUrl,
    exchange: uniqueName('test_events'),
    internalToken: TEST_INTERNAL_TOKEN,
    adminToken: TEST_ADMIN_TOKEN,
    upstreams: Object.fromEntries(UPSTREAM_NAMES.map((name) => [name, DEAD_UPSTREAM])) as Record<UpstreamName, string>,
    defaultRateLimit: { points: 1000, duration: 60 },
    failedAuthLimits: { api: { points: 60, duration: 60 }, admin: { points: 10, duration: 900 } },
    anonymousRateLimit: { points: 1000, duration: 60 },
    browserAddressRateLimit: { points: 1000, duration: 60 },
    signupAddressRateLimit: { points: 1000, duration: 60 },
    trustProxy: false,
    auditRetentionMs: 86_400_000,
    auditSweepIntervalMs: 3_600_000,
    upstreamTimeoutMs: 3000,
    bodyLimit: '100kb',
    keyCacheTtlMs: 2000,
    circuitResetMs: 1000,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    outboxSweepIntervalMs: 200,
    ...overrides,
  };
}

export function allUpstreams(url: string): Record<UpstreamName, string> {
  return Object.fromEntries(UPSTREAM_NAMES.map((name) => [name, url])) as Record<UpstreamName, string>;
}

export const startGateway = (overrides: Partial<GatewaySettings> = {}): Promise<RunningGateway> =>
  bootGateway(testGatewaySettings(overrides));

export type ProgramWithKey = { programId: string; key: string; keyId: string };

/** A program and a key made through the admin API, the way an operator does it. */
export async function createProgramWithKey(gateway: RunningGateway, settings: Record<string, unknown> = {}): Promise<ProgramWithKey> {
  const program = await request(gateway.app)
    .post('/admin/v1/programs')
    .set(adminAuth)
    .send({ name: 'Test program', ...settings })
    .expect(200);
  const apiKey = await request(gateway.app).post(`/admin/v1/programs/${program.body.id}/api-keys`).set(adminAuth).expect(200);
  return { programId: program.body.id, key: apiKey.body.key, keyId: apiKey.body.id };
}

export type MemberSession = { cookie: string; csrfToken: string; email: string; password: string; memberId: string };

/** A password that meets the console's rule (12 to 128 characters), different for every member. */
export const memberPassword = () => `pw-${randomUUID()}`;

/**
 * A team member of the program with this role, signed in: invited through the admin route, as an
 * operator does, and accepted with a password. `cookie` is the Cookie header's `name=value`.
 */
export async function memberSession(gateway: RunningGateway, programId: string, role: TeamRole): Promise<MemberSession> {
  const email = `${role.toLowerCase()}-${randomUUID().slice(0, 8)}@example.com`;
  const invited = await request(gateway.url)
    .post(`/admin/v1/programs/${programId}/members`)
    .set(adminAuth)
    .send({ email, role })
    .expect(200);
  const token = new URL(String(invited.body.inviteUrl).replace('#/', '')).searchParams.get('token') as string;
  const password = memberPassword();
  const accepted = await request(gateway.url).post('/api/v1/team/invites/accept').send({ token, password }).expect(200);
  const cookie = String((accepted.headers['set-cookie'] as unknown as string[])[0]).split(';')[0] as string;
  return { cookie, csrfToken: accepted.body.csrfToken, email, password, memberId: accepted.body.member.id };
}

/** The headers of a write made with a member's session from the console's page: cookie, CSRF token and the gateway's origin. */
export const memberWrite = (gateway: RunningGateway, session: Pick<MemberSession, 'cookie' | 'csrfToken'>) => ({
  cookie: session.cookie,
  'x-csrf-token': session.csrfToken,
  origin: gateway.url,
});

export type ReceivedRequest = { method: string; url: string; headers: IncomingHttpHeaders; body: string };

export type EchoUpstream = {
  url: string;
  received: ReceivedRequest[];
  /** Answers with this status instead of 200 from now on; null: never answers at all. */
  answerWith: (status: number | null) => void;
  /** Answers this many ms after a request arrives from now on (0: at once), as a slow service would. */
  answerAfter: (ms: number) => void;
  /** Never answers requests of this program (as a payload that makes the service hang would). */
  hangFor: (programId: string | null) => void;
  /** Answers these programs' requests with headers and a first chunk, then never ends the body (a long export): the connection stays taken. */
  trickleFor: (programIds: string[]) => void;
  stop: () => Promise<void>;
};

/** A test peer standing in for a service: it records what the gateway sent and echoes it back. */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  const received: ReceivedRequest[] = [];
  let status: number | null = 200;
  let delayMs = 0;
  let hungProgram: string | null = null;
  let trickling = new Set<string>();
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const entry = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      if (incoming.url === '/healthz') return outgoing.end('{"status":"ok"}');
      if (hungProgram !== null && incoming.headers['x-program-id'] === hungProgram) return;
      if (trickling.has(String(incoming.headers['x-program-id']))) {
        outgoing.writeHead(200, { 'content-type': 'text/csv' });
        return void outgoing.write('name\n');
      }
      if (status === null) return; // hangs: a service that accepts connections but never answers
      const answer = { status, body: JSON.stringify({ ...entry, sequence: received.length }) };
      const write = () => {
        // A long keep-alive, like the services': it describes the gateway's pooled connection, not the client's.
        outgoing.writeHead(answer.status, { 'content-type': 'application/json', location: '/somewhere', 'keep-alive': 'timeout=65' });
        outgoing.end(answer.body);
      };
      if (delayMs > 0) setTimeout(write, delayMs);
      else write();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answerWith: (next) => {
      status = next;
    },
    answerAfter: (ms) => {
      delayMs = ms;
    },
    hangFor: (programId) => {
      hungProgram = programId;
    },
    trickleFor: (programIds) => {
      trickling = new Set(programIds);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => socket.end(() => resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export type OwnRedis = { url: string; stop: () => Promise<void> };

/** A Redis of this test only, so stopping it mid-traffic disturbs nobody else. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  while (!(await portOpen(port))) {
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
      return stopped;
    },
  };
}

export type GatewayProcess = {
  url: string;
  /** The exit code once the process has ended; null while it runs. */
  exitCode: () => number | null;
  /** Everything the process wrote to stdout and stderr so far (its log). */
  output: () => string;
  exited: Promise<number | null>;
  signal: (signal: NodeJS.Signals) => void;
  stop: () => Promise<void>;
};

/**
 * The compiled gateway (gateway/dist/start.js, so build first) as its own process, as `npm start`
 * and the containers run it: what happens on a signal or an uncaught exception is the process's.
 */
export async function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const { mongoUrl, amqpUrl } = testInfra();
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, [join(__dirname, '../dist/start.js')], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      METRICS_PORT: '0',
      MONGO_URL: mongoUrl,
      MONGO_DB_NAME: uniqueName('test_gateway'),
      AMQP_URL: amqpUrl,
      EVENT_EXCHANGE: uniqueName('test_events'),
      INTERNAL_TOKEN: TEST_INTERNAL_TOKEN,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      ...Object.fromEntries(UPSTREAM_NAMES.map((name) => [`${name.toUpperCase().replace(/-/g, '_')}_URL`, DEAD_UPSTREAM])),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the gateway did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    exitCode: () => child.exitCode,
    output: () => output,
    exited,
    signal: (signal) => child.kill(signal),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export type ReplicasSharingRedis = { upstream: EchoUpstream; redis: OwnRedis; replicaA: RunningGateway; replicaB: RunningGateway };

/** Two gateway replicas on one database and one Redis of their own (the limiter's counters shared), before an echo upstream. */
export async function startReplicasSharingRedis(defaultRateLimit: { points: number; duration: number }): Promise<ReplicasSharingRedis> {
  const upstream = await startEchoUpstream();
  const redis = await startOwnRedis();
  const replicaA = await startGateway({ upstreams: allUpstreams(upstream.url), redisUrl: redis.url, defaultRateLimit });
  const replicaB = await startGateway({
    upstreams: allUpstreams(upstream.url),
    redisUrl: redis.url,
    defaultRateLimit,
    dbName: replicaA.connection.name,
  });
  return { upstream, redis, replicaA, replicaB };
}

export async function stopReplicasSharingRedis(replicas: ReplicasSharingRedis | undefined): Promise<void> {
  await replicas?.replicaA.stop();
  await replicas?.replicaB.stop();
  await replicas?.redis.stop();
  await replicas?.upstream.stop();
}
