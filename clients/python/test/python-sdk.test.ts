import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gatewayOpenApiDocument } from '../../../gateway/src/openapi/document';
import { System } from '../../../system-tests/harness';

/**
 * The Python SDK as an integrator gets it: the wheel clients/python/build.sh builds from the document,
 * installed from that file (its dependencies from PyPI) into a fresh venv, then its unit tests
 * (pytest) and the journey of clients/python/tests/journey.py against the whole system.
 */
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');
const PYTHON_SDK = join(ROOT, 'clients/python');
const PYTEST_VERSION = '9.2.0';

let system: System;
let wheel = '';
let python = '';

/** Runs a command; on failure the error names it and carries its whole output. */
async function sh(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout: number }): Promise<string> {
  try {
    const { stdout } = await run(file, args, { ...options, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed:\n${stdout}\n${stderr}`);
  }
}

async function installedWheel(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'python-sdk-'));
  wheel = (await sh('bash', [join(PYTHON_SDK, 'build.sh'), join(directory, 'dist')], { timeout: 400_000 })).trim().split('\n').at(-1) as string;
  await sh('python3', ['-m', 'venv', join(directory, 'venv')], { timeout: 120_000 });
  python = join(directory, 'venv/bin/python');
  await sh(python, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', wheel, `pytest==${PYTEST_VERSION}`], { timeout: 300_000 });
}

beforeAll(async () => {
  const started = System.start().then((running) => (system = running));
  await Promise.all([started, installedWheel()]);
}, 600_000);
afterAll(async () => {
  await system?.stop();
});

test('the wheel carries the document’s version (info.version), as the installed package reports it, and the CHANGELOG has an entry for it', async () => {
  const { version } = gatewayOpenApiDocument().info;
  expect(wheel.endsWith(`affiliate_client-${version}-py3-none-any.whl`)).toBe(true);
  expect(readFileSync(join(PYTHON_SDK, 'pyproject.toml'), 'utf8')).toContain(`\nversion = "${version}"\n`);
  expect(readFileSync(join(PYTHON_SDK, 'CHANGELOG.md'), 'utf8')).toContain(`\n## ${version}\n`);
  const installed = await sh(python, ['-c', 'import affiliate_client; print(affiliate_client.__version__)'], { timeout: 60_000 });
  expect(installed.trim()).toBe(version);
});

test('the installed wheel passes its unit tests: webhook verification, typed errors, Link paging, retries honouring Retry-After with one Idempotency-Key', async () => {
  const output = await sh(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], { cwd: PYTHON_SDK, timeout: 180_000 });
  expect(output).toMatch(/\d+ passed/);
  expect(output).not.toMatch(/failed|error/i);
}, 200_000);

test('the Python journey against the running system: affiliate, coupon, code, sales through 429s (one key per POST), every page of the sales, one delivered webhook verified', async () => {
  // One request per route every 2 s: the journey's repeated calls meet real 429s with Retry-After.
  const { key } = await system.createProgram({ rateLimit: { points: 1, duration: 2 } });
  const output = await sh(python, [join(PYTHON_SDK, 'tests/journey.py')], {
    env: { PATH: process.env.PATH, AFFILIATE_GATEWAY_URL: system.gatewayUrl, AFFILIATE_API_KEY: key },
    timeout: 240_000,
  });
  const seen = JSON.parse(output.trim().split('\n').at(-1) as string);
  expect(seen).toMatchObject({ version: gatewayOpenApiDocument().info.version, sales: 3, listed: 3, verifiedEvent: 'sale.created' });
  expect(seen.rateLimitedRetries).toBeGreaterThan(0);
}, 260_000);
