#!/usr/bin/env node
// `npm start` without Docker: runs the gateway and every service as separate processes, restarts a
// process that dies (with backoff), and stops them all on Ctrl-C. Starts scripts/local-infra.sh
// first when MONGO_URL is not set.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const components = [
  ['coupon', 'services/coupon'],
  ['affiliate', 'services/affiliate'],
  ['referral', 'services/referral'],
  ['sale', 'services/sale'],
  ['webhook-dispatcher', 'services/webhook-dispatcher'],
  ['gateway', 'gateway'],
];

if (!process.env.MONGO_URL) {
  const output = execFileSync('bash', [join(root, 'scripts/local-infra.sh'), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const line of output.trim().split('\n')) {
    const [key, ...value] = line.split('=');
    if (key && !process.env[key]) process.env[key] = value.join('=');
  }
}
process.env.WEBHOOK_ALLOW_PRIVATE_URLS ??= 'true';
// A fresh internal token per run: the services accept it as the gateway's credential, so a shared
// default would let anything that reaches ports 3001-3005 act for any program.
process.env.INTERNAL_TOKEN ??= randomBytes(32).toString('hex');
process.env.BOOTSTRAP_API_KEY ??= 'ak_demo_local_development_key_change_me';

const children = new Map();
let stopping = false;

function launch(name, dir, restarts = 0) {
  const child = spawn(process.execPath, [join(root, dir, 'dist/start.js')], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.set(name, child);
  const prefix = (stream, out) => stream.on('data', (chunk) => {
    for (const line of chunk.toString().split('\n')) if (line) out.write(`${name.padEnd(19)}| ${line}\n`);
  });
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  const startedAt = Date.now();
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (stopping) return;
    // A process that ran a while gets a fresh backoff; one that dies at once backs off up to 30 s.
    const next = Date.now() - startedAt > 60_000 ? 0 : restarts + 1;
    const delay = Math.min(30_000, 500 * 2 ** next);
    process.stderr.write(`${name} exited (${signal ?? code}); restarting in ${delay} ms\n`);
    setTimeout(() => launch(name, dir, next), delay);
  });
}

for (const [name, dir] of components) launch(name, dir);
process.stdout.write(`started ${components.length} processes; gateway on http://127.0.0.1:${process.env.PORT_GATEWAY ?? 8080}, Ctrl-C stops all\n`);

function stopAll() {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill('SIGTERM');
  const deadline = setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(1);
  }, 20_000);
  const check = setInterval(() => {
    if (children.size === 0) {
      clearInterval(check);
      clearTimeout(deadline);
      process.exit(0);
    }
  }, 100);
}
process.on('SIGINT', stopAll);
process.on('SIGTERM', stopAll);
