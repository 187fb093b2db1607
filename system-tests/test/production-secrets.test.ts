import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '@affiliate/platform';
import { z } from 'zod';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const ENTRY_POINTS = {
  coupon: 'services/coupon/dist/start.js',
  affiliate: 'services/affiliate/dist/start.js',
  referral: 'services/referral/dist/start.js',
  sale: 'services/sale/dist/start.js',
  'webhook-dispatcher': 'services/webhook-dispatcher/dist/start.js',
  gateway: 'gateway/dist/start.js',
  // The operators' CLI reads the gateway's settings (and works on its database).
  'admin CLI': 'gateway/dist/cli/admin.js list-programs',
};
const NEEDS_ADMIN_TOKEN = new Set(['gateway', 'admin CLI']);

/** Starts a component with this environment; it must exit on its own (a config error exits at once). */
async function startWith(entryPoint: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const [script, ...args] = entryPoint.split(' ');
  return run(process.execPath, [join(ROOT, script!), ...args], { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? '' }),
  );
}

// The defaults the code, docker-compose.yml and .env.example used to fall back to: public, so worthless.
const SHIPPED = {
  INTERNAL_TOKEN: 'local-internal-token-change-me',
  ADMIN_TOKEN: 'local-admin-token-change-me',
  BOOTSTRAP_API_KEY: 'ak_demo_local_development_key_change_me',
  // The demo program's owner's password that `npm start` and the trial overlay set.
  BOOTSTRAP_OWNER_PASSWORD: 'local-demo-password-change-me',
};

describe.each(Object.entries(ENTRY_POINTS))('%s in production', (component, entryPoint) => {
  test('refuses to start without its secrets, naming each variable', async () => {
    const outcome = await startWith(entryPoint, { NODE_ENV: 'production' });
    expect(outcome.code).toBe(78);
    expect(outcome.stderr).toContain('INTERNAL_TOKEN: required when NODE_ENV=production');
    if (NEEDS_ADMIN_TOKEN.has(component)) expect(outcome.stderr).toContain('ADMIN_TOKEN: required when NODE_ENV=production');
  });

  test('refuses the shipped default secrets', async () => {
    const outcome = await startWith(entryPoint, { NODE_ENV: 'production', ...SHIPPED });
    expect(outcome.code).toBe(78);
    const refused =
      component === 'gateway'
        ? Object.keys(SHIPPED)
        : NEEDS_ADMIN_TOKEN.has(component)
          ? ['INTERNAL_TOKEN', 'ADMIN_TOKEN']
          : ['INTERNAL_TOKEN'];
    for (const name of refused) expect(outcome.stderr).toContain(`${name}: is a shipped default`);
  });

  test('refuses secrets shorter than 32 characters', async () => {
    const short = 'q7Lr-0aZ-w3Xk-91Pd'; // 18 characters, random enough, still too short
    const outcome = await startWith(entryPoint, { NODE_ENV: 'production', INTERNAL_TOKEN: short, ADMIN_TOKEN: short });
    expect(outcome.code).toBe(78);
    expect(outcome.stderr).toContain('INTERNAL_TOKEN: must be at least 32 characters');
  });
});

test('every secret value written anywhere in the repository is refused in production', () => {
  // Test, bench, trial and demo credentials are public the moment they are committed. Any value given
  // to a variable named like a secret (…TOKEN, …API_KEY, …SECRET, …PASSWORD) in a tracked file must be refused.
  const files = execFileSync('git', ['ls-files', '*.ts', '*.mjs', '*.js', '*.sh', '*.yml', '*.yaml', '*.md', '.env*'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  const assignment = /\b[A-Z_]*(?:TOKEN|API_KEY|SECRET|PASSWORD)['"]?\s*[:=]\s*['"`]?([A-Za-z0-9_.-]{16,})/g;
  const found = new Set<string>();
  for (const file of files) {
    for (const match of readFileSync(join(ROOT, file), 'utf8').matchAll(assignment)) found.add(match[1]!);
  }
  // The scan must see the credentials it exists for, or it proves nothing.
  expect([...found]).toEqual(
    expect.arrayContaining([
      'system-test-internal-token-0123456789',
      'dev-admin-token-change-me',
      'ak_demo_local_development_key_change_me',
      'local-demo-password-change-me',
    ]),
  );
  const accepted = [...found].filter((value) => {
    try {
      parseConfig({ INTERNAL_TOKEN: z.string() }, { NODE_ENV: 'production', INTERNAL_TOKEN: value }, { required: ['INTERNAL_TOKEN'] });
      return true;
    } catch {
      return false;
    }
  });
  expect(accepted).toEqual([]);
});
