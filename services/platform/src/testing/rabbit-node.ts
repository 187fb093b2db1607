import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const RABBIT_BIN = '/usr/lib/rabbitmq/bin';
const run = promisify(execFile);

export async function freePort(): Promise<number> {
  // Dist port = AMQP port + 20000, so stay low enough for both to be valid.
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer().once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
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

/**
 * A RabbitMQ node of a test's own, so the test can really stop and restart the broker without
 * disturbing other test files. Uses Debian's rabbitmq-server (installed by scripts/local-infra.sh).
 */
export async function startDisposableRabbit(): Promise<DisposableRabbit> {
  if (!existsSync(`${RABBIT_BIN}/rabbitmq-server`)) {
    throw new Error('rabbitmq-server is not installed: run `npm run infra -- start` first');
  }
  const port = await freePort();
  const node = `rabbit-test-${port}@localhost`;
  const base = mkdtempSync(join(tmpdir(), 'rabbit-test-'));
  writeFileSync(join(base, 'enabled_plugins'), '[].');
  writeFileSync(join(base, 'rabbitmq.conf'), 'disk_free_limit.absolute = 50MB\nloopback_users = none\n');
  const env = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(port + 20_000),
    RABBITMQ_MNESIA_BASE: join(base, 'mnesia'),
    RABBITMQ_LOG_BASE: join(base, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(base, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: join(base, 'rabbitmq'),
  };
  const start = async () => {
    spawn(`${RABBIT_BIN}/rabbitmq-server`, [], { env, stdio: 'ignore', detached: true }).unref();
    await waitForPort(port, true, 60_000);
  };
  const stop = async () => {
    await run(`${RABBIT_BIN}/rabbitmqctl`, ['-n', node, 'shutdown'], { env }).catch(() => undefined);
    await waitForPort(port, false, 30_000);
  };
  await start();
  return { url: `amqp://guest:guest@127.0.0.1:${port}`, start, stop, destroy: stop };
}
