#!/usr/bin/env node
// `npm start` without Docker: runs the gateway and every service as separate processes, restarts a
// process that dies (with backoff) unless it refused its configuration, and stops them all on
// Ctrl-C. Reads `.env` when there is one, and starts scripts/local-infra.sh first when MONGO_URL is not set.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The ports every component listens on by default, from the platform package (built by `npm start`).
const { DEFAULT_PORTS } = createRequire(import.meta.url)(join(root, 'services/platform/dist/run.js'));
// The admin token the gateway uses when ADMIN_TOKEN is unset, to tell the operator how to sign in.
const GATEWAY_DEFAULT_ADMIN_TOKEN = createRequire(import.meta.url)(
  join(root, 'gateway/dist/config.js'),
).gatewayConfigShape.ADMIN_TOKEN.parse(undefined);
const components = [
  ['coupon', 'services/coupon'],
  ['affiliate', 'services/affiliate'],
  ['referral', 'services/referral'],
  ['sale', 'services/sale'],
  ['webhook-dispatcher', 'services/webhook-dispatcher'],
  ['gateway', 'gateway'],
];
// Exit status of a process that refused its settings (EX_CONFIG): restarting it would only fail again.
const EX_CONFIG = 78;

// The settings in .env (or ENV_FILE), as compose reads them; a variable already set in the environment wins.
const envFile = process.env.ENV_FILE ?? join(root, '.env');
if (existsSync(envFile)) {
  for (const [key, value] of Object.entries(parseEnv(readFileSync(envFile, 'utf8')))) process.env[key] ??= value;
}

if (!process.env.MONGO_URL) {
  const output = execFileSync('bash', [join(root, 'scripts/local-infra.sh'), 'start'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
// The demo program's OWNER, so that the console has someone to sign in as; only with a demo program
// to own. `BOOTSTRAP_OWNER_EMAIL=` (empty) in .env goes without.
const DEMO_OWNER_PASSWORD = 'local-demo-password-change-me';
if (process.env.BOOTSTRAP_API_KEY && process.env.BOOTSTRAP_OWNER_EMAIL !== '') {
  process.env.BOOTSTRAP_OWNER_EMAIL ??= 'owner@example.com';
  process.env.BOOTSTRAP_OWNER_PASSWORD ??= DEMO_OWNER_PASSWORD;
}

const children = new Map();
let stopping = false;

// One PORT would make every process try the same port: PORT is the gateway's (the public entry
// point); each service listens where the gateway looks for it, the port of its *_URL (COUPON_URL,
// ..., WEBHOOK_DISPATCHER_URL), by default its own port of DESIGN.md section 7.
const gatewayPort = process.env.PORT ?? String(DEFAULT_PORTS.gateway);
function portOf(name) {
  if (name === 'gateway') return gatewayPort;
  const url = process.env[`${name.toUpperCase().replace('-', '_')}_URL`];
  return url ? new URL(url).port || String(DEFAULT_PORTS[name]) : String(DEFAULT_PORTS[name]);
}

// METRICS_PORT is the gateway's alone here, as PORT: given to every process on one address they would
// all try the same port, so the services serve /metrics on their own ports instead.
function envOf(name) {
  const env = { ...process.env, PORT: portOf(name) };
  if (name !== 'gateway') delete env.METRICS_PORT;
  return env;
}

function launch(name, dir, restarts = 0) {
  const child = spawn(process.execPath, [join(root, dir, 'dist/start.js')], { env: envOf(name), stdio: ['ignore', 'pipe', 'pipe'] });
  children.set(name, child);
  const prefix = (stream, out) =>
    stream.on('data', (chunk) => {
      for (const line of chunk.toString().split('\n')) if (line) out.write(`${name.padEnd(19)}| ${line}\n`);
    });
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  const startedAt = Date.now();
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (stopping) return;
    if (code === EX_CONFIG) {
      process.stderr.write(
        `${name} refused its settings (exit ${EX_CONFIG}, see its message above): not restarting it; fix the setting and run npm start again\n`,
      );
      return;
    }
    // A process that ran a while gets a fresh backoff; one that dies at once backs off up to 30 s.
    const next = Date.now() - startedAt > 60_000 ? 0 : restarts + 1;
    const delay = Math.min(30_000, 500 * 2 ** next);
    process.stderr.write(`${name} exited (${signal ?? code}); restarting in ${delay} ms\n`);
    setTimeout(() => launch(name, dir, next), delay);
  });
}

for (const [name, dir] of components) launch(name, dir);
process.stdout.write(`started ${components.length} processes; gateway on http://127.0.0.1:${gatewayPort}, Ctrl-C stops all\n`);
process.stdout.write(signInHelp());

/** How to sign in to the console: a password this script chose is shown, one from the settings only named. */
function signInHelp() {
  const { BOOTSTRAP_OWNER_EMAIL: email, BOOTSTRAP_OWNER_PASSWORD: password, ADMIN_TOKEN: adminToken } = process.env;
  const lines = [`console: http://localhost:${gatewayPort}/console`];
  if (email && password)
    lines.push(
      `  Team member (OWNER of the demo program): ${email}, password ${password === DEMO_OWNER_PASSWORD ? password : 'BOOTSTRAP_OWNER_PASSWORD from your settings'}`,
    );
  lines.push(`  Operator: ${adminToken ? 'ADMIN_TOKEN from your settings' : `admin token ${GATEWAY_DEFAULT_ADMIN_TOKEN}`}`);
  return `${lines.join('\n')}\n`;
}

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
