import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDisposableMongo, startDisposableRabbit, type DisposableMongo, type DisposableRabbit } from '@affiliate/platform/testing';

/**
 * `npm start` as a person runs it (scripts/start-all.mjs, after the build `npm test` already did):
 * every process on its own port, .env read, and a process that refuses its settings left down with
 * a message instead of restarted forever.
 */
const ROOT = join(__dirname, '..', '..');
const SERVICES = ['coupon', 'affiliate', 'referral', 'sale', 'webhook-dispatcher'] as const;

let mongo: DisposableMongo;
let rabbit: DisposableRabbit;

beforeAll(async () => {
  [mongo, rabbit] = await Promise.all([startDisposableMongo(), startDisposableRabbit()]);
});

afterAll(async () => {
  await Promise.all([rabbit?.destroy(), mongo?.destroy()]);
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

type Started = { child: ChildProcess; output: () => string; stop: () => Promise<void> };

function startAll(env: Record<string, string>): Started {
  let output = '';
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start-all.mjs')], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      MONGO_URL: mongo.url,
      AMQP_URL: rabbit.url,
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function until(check: () => Promise<boolean> | boolean, what: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const answers = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2000) })
    .then((response) => response.status === 200)
    .catch(() => false);

async function ports(): Promise<{ env: Record<string, string>; gateway: number; services: Record<(typeof SERVICES)[number], number> }> {
  const services = Object.fromEntries(await Promise.all(SERVICES.map(async (name) => [name, await freePort()] as const))) as Record<
    (typeof SERVICES)[number],
    number
  >;
  const gateway = await freePort();
  const env: Record<string, string> = { PORT: String(gateway) };
  for (const name of SERVICES) env[`${name.toUpperCase().replace('-', '_')}_URL`] = `http://127.0.0.1:${services[name]}`;
  return { env, gateway, services };
}

test('npm start runs every process on its own port (PORT is the gateway\u2019s) and reads .env', async () => {
  const { env, gateway, services } = await ports();
  const envFile = join(mkdtempSync(join(tmpdir(), 'start-all-')), '.env');
  const bootstrapKey = `ak_dotenv_${randomUUID().replace(/-/g, '')}`;
  writeFileSync(envFile, `# a comment\nBOOTSTRAP_API_KEY=${bootstrapKey}\nMONGO_DB_PREFIX=start_${randomUUID().slice(0, 8)}\n`);
  const started = startAll({ ...env, ENV_FILE: envFile });
  try {
    await until(() => answers(`http://127.0.0.1:${gateway}/readyz`), started.output);
    // The gateway is ready without its upstreams (readiness never checks another process), so each
    // service is awaited on its own port: a loaded machine once had the dispatcher still starting.
    for (const name of SERVICES)
      await until(
        () => answers(`http://127.0.0.1:${services[name]}/healthz`),
        () => `${name} on port ${services[name]}: ${started.output()}`,
      );
    // METRICS_PORT is the gateway's: the services, sharing one address, serve /metrics on their own ports.
    for (const name of SERVICES)
      expect({ name, metrics: await answers(`http://127.0.0.1:${services[name]}/metrics`) }).toEqual({ name, metrics: true });
    // The key from .env made the demo program: it answers on the public API.
    const coupons = await fetch(`http://127.0.0.1:${gateway}/api/v1/coupons`, { headers: { authorization: `Bearer ${bootstrapKey}` } });
    expect(coupons.status).toBe(200);
    // The console's front door: the start message says how to sign in, and the demo program's OWNER can.
    expect(started.output()).toContain(`console: http://localhost:${gateway}/console`);
    expect(started.output()).toContain('owner@example.com, password local-demo-password-change-me');
    const signedIn = await fetch(`http://127.0.0.1:${gateway}/api/v1/team/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'owner@example.com', password: 'local-demo-password-change-me' }),
    });
    expect(signedIn.status).toBe(200);
    expect(((await signedIn.json()) as { member: { role: string } }).member.role).toBe('OWNER');
  } finally {
    await started.stop();
  }
});

test('npm start does not restart a process that refused its settings (exit 78), and says so', async () => {
  const { env, gateway } = await ports();
  // Every service reads MAX_CONCURRENT_REQUESTS; the gateway does not, and keeps serving.
  const started = startAll({ ...env, MAX_CONCURRENT_REQUESTS: 'many', MONGO_DB_PREFIX: `start_${randomUUID().slice(0, 8)}` });
  try {
    await until(() => SERVICES.every((name) => started.output().includes(`${name} refused its settings (exit 78`)), started.output);
    await until(() => answers(`http://127.0.0.1:${gateway}/healthz`), started.output);
    // A restart would come within a second of the exit (the first backoff); give it three.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(started.output()).not.toMatch(/restarting in/);
    expect(started.output()).toMatch(/MAX_CONCURRENT_REQUESTS/);
  } finally {
    await started.stop();
  }
});
