import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const RABBIT_BIN = '/usr/lib/rabbitmq/bin';
const run = promisify(execFile);

/** Free TCP ports stay below Linux's ephemeral range (32768+), which outgoing connections draw from. */
const PORT_RANGE = { low: 10_000, high: 21_000 };
/** Erlang distribution listens on the AMQP port plus this, still below the ephemeral range. */
const DIST_PORT_OFFSET = 11_000;

async function isFree(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const probe = createServer().once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * Test files run side by side (jest workers), each starting a dozen processes on ports chosen here,
 * and a port found free is only bound a moment later: two workers, or two calls of one start, could
 * pick the same one (a process then failed to listen). So each worker draws from a slice of the range
 * of its own, and a process never hands out the same port twice.
 */
const WORKER_SLICES = 4;
const handedOut = new Set<number>();

function rangeOfThisWorker(): { low: number; high: number } {
  const worker = (Number(process.env.JEST_WORKER_ID ?? 1) - 1) % WORKER_SLICES;
  const size = Math.floor((PORT_RANGE.high - PORT_RANGE.low) / WORKER_SLICES);
  return { low: PORT_RANGE.low + worker * size, high: PORT_RANGE.low + (worker + 1) * size };
}

/** A port that is free now, and whose companion port (port + companionOffset) is free too when asked. */
export async function freePort(companionOffset?: number): Promise<number> {
  const range = rangeOfThisWorker();
  for (;;) {
    const port = range.low + Math.floor(Math.random() * (range.high - range.low));
    if (handedOut.has(port) || (companionOffset !== undefined && handedOut.has(port + companionOffset))) continue;
    if ((await isFree(port)) && (companionOffset === undefined || (await isFree(port + companionOffset)))) {
      handedOut.add(port);
      if (companionOffset !== undefined) handedOut.add(port + companionOffset);
      return port;
    }
  }
}

export async function waitForPort(port: number, open: boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => socket.end(() => resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (isOpen === open) return;
    if (Date.now() > deadline) throw new Error(`RabbitMQ port ${port} did not ${open ? 'open' : 'close'} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export type DisposableRabbit = { url: string; stop: () => Promise<void>; start: () => Promise<void>; destroy: () => Promise<void> };

/** A node of a test's own: its name, ports and state under `base`, as rabbitmq-server reads them. */
export type RabbitNodeSpec = { node: string; port: number; base: string; env: NodeJS.ProcessEnv };

export function ensureRabbitInstalled(): void {
  if (!existsSync(`${RABBIT_BIN}/rabbitmq-server`)) {
    throw new Error('rabbitmq-server is not installed: run `npm run infra -- start` first');
  }
}

/**
 * Node `name-<port>@localhost` on a free port, its Erlang distribution port beside it, its database,
 * logs and pid file under a directory of its own. Nodes share the machine's epmd and the user's
 * Erlang cookie (~/.erlang.cookie), so nodes started this way can form a cluster.
 */
export async function rabbitNodeSpec(name: string, taken: ReadonlySet<number> = new Set()): Promise<RabbitNodeSpec> {
  let port = await freePort(DIST_PORT_OFFSET);
  while (taken.has(port) || taken.has(port + DIST_PORT_OFFSET)) port = await freePort(DIST_PORT_OFFSET);
  const node = `${name}-${port}@localhost`;
  const base = mkdtempSync(join(tmpdir(), `${name}-`));
  writeFileSync(join(base, 'enabled_plugins'), '[].');
  writeFileSync(join(base, 'rabbitmq.conf'), 'disk_free_limit.absolute = 50MB\nloopback_users = none\n');
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(port + DIST_PORT_OFFSET),
    RABBITMQ_MNESIA_BASE: join(base, 'mnesia'),
    RABBITMQ_LOG_BASE: join(base, 'log'),
    RABBITMQ_PID_FILE: join(base, 'rabbit.pid'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(base, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: join(base, 'rabbitmq'),
  };
  return { node, port, base, env };
}

export async function startRabbitNode(spec: RabbitNodeSpec): Promise<void> {
  spawn(`${RABBIT_BIN}/rabbitmq-server`, [], { env: spec.env, stdio: 'ignore', detached: true }).unref();
  await waitForPort(spec.port, true, 120_000);
}

export async function rabbitmqctl(spec: RabbitNodeSpec, args: string[], timeoutMs = 120_000): Promise<string> {
  const { stdout } = await run(`${RABBIT_BIN}/rabbitmqctl`, ['-n', spec.node, ...args], { env: spec.env, timeout: timeoutMs });
  return stdout;
}

export async function stopRabbitNode(spec: RabbitNodeSpec): Promise<void> {
  await rabbitmqctl(spec, ['shutdown']).catch(() => undefined);
  await waitForPort(spec.port, false, 30_000);
}

/**
 * A RabbitMQ node of a test's own, so the test can really stop and restart the broker without
 * disturbing other test files. Uses Debian's rabbitmq-server (installed by scripts/local-infra.sh).
 */
export async function startDisposableRabbit(): Promise<DisposableRabbit> {
  ensureRabbitInstalled();
  const spec = await rabbitNodeSpec('rabbit-test');
  const start = () => startRabbitNode(spec);
  const stop = () => stopRabbitNode(spec);
  await start();
  return { url: `amqp://guest:guest@127.0.0.1:${spec.port}`, start, stop, destroy: stop };
}
