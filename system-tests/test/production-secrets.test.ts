import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const ENTRY_POINTS = {
  coupon: 'services/coupon/dist/start.js',
  affiliate: 'services/affiliate/dist/start.js',
  referral: 'services/referral/dist/start.js',
  sale: 'services/sale/dist/start.js',
  'webhook-dispatcher': 'services/webhook-dispatcher/dist/start.js',
  gateway: 'gateway/dist/start.js',
};

/** Starts a component with this environment; it must exit on its own (a config error exits at once). */
async function startWith(entryPoint: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return run(process.execPath, [join(ROOT, entryPoint)], { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? '' }),
  );
}

// The defaults the code, docker-compose.yml and .env.example used to fall back to: public, so worthless.
const SHIPPED = {
  INTERNAL_TOKEN: 'local-internal-token-change-me',
  ADMIN_TOKEN: 'local-admin-token-change-me',
  BOOTSTRAP_API_KEY: 'ak_demo_local_development_key_change_me',
};

describe.each(Object.entries(ENTRY_POINTS))('%s in production', (component, entryPoint) => {
  test('refuses to start without its secrets, naming each variable', async () => {
    const outcome = await startWith(entryPoint, { NODE_ENV: 'production' });
    expect(outcome.code).toBe(78);
    expect(outcome.stderr).toContain('INTERNAL_TOKEN: required when NODE_ENV=production');
    if (component === 'gateway') expect(outcome.stderr).toContain('ADMIN_TOKEN: required when NODE_ENV=production');
  });

  test('refuses the shipped default secrets', async () => {
    const outcome = await startWith(entryPoint, { NODE_ENV: 'production', ...SHIPPED });
    expect(outcome.code).toBe(78);
    const refused = component === 'gateway' ? Object.keys(SHIPPED) : ['INTERNAL_TOKEN'];
    for (const name of refused) expect(outcome.stderr).toContain(`${name}: is a shipped default`);
  });

  test('refuses secrets shorter than 32 characters', async () => {
    const short = 'q7Lr-0aZ-w3Xk-91Pd'; // 18 characters, random enough, still too short
    const outcome = await startWith(entryPoint, { NODE_ENV: 'production', INTERNAL_TOKEN: short, ADMIN_TOKEN: short });
    expect(outcome.code).toBe(78);
    expect(outcome.stderr).toContain('INTERNAL_TOKEN: must be at least 32 characters');
  });
});
