import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { okBody, System, type Api } from '../../system-tests/harness';

/**
 * The console's Sign-up and approval page in headless Chromium against the whole system, beside
 * console.headless-chromium.test.ts: the sign-up settings saved from the page open /join/{slug} with
 * those questions, and applications wait in the queue (on the affiliates page the Sign-up page links to)
 * with their answers until approved or rejected.
 */
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'console');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

let system: System;
let browser: Browser;
let program: { programId: string; key: string; api: Api };

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  system = await System.start();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  program = await system.createProgram({ name: 'Acme Outdoor' });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

async function signedIn(): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${system.gatewayUrl}/console`);
  await page.getByLabel('A program team (its API key)').check();
  await page.getByLabel('API key', { exact: true }).fill(program.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.goto(`${system.gatewayUrl}/console#/signup`);
  await page.getByRole('heading', { name: 'Sign-up', exact: true }).waitFor();
  return page;
}

async function checkPage(page: Page, name: string) {
  await page.evaluate(AXE);
  const violations = (await page.evaluate(
    `axe.run(document).then((result) => result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.map((node) => node.target.join(' ')).slice(0, 3) })))`,
  )) as { impact: string }[];
  expect({
    page: name,
    violations: violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical'),
  }).toEqual({ page: name, violations: [] });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

test('sign-up settings saved in the console open /join/{slug} with their questions, and new affiliates wait for approval', async () => {
  const page = await signedIn();
  const slug = `acme-${randomUUID().slice(0, 8)}`;
  await page.getByLabel('Address (/join/…: lower-case letters, numbers and hyphens)').fill(slug);
  await page.getByLabel('Open for applications').check();
  await page.getByLabel('New affiliates wait for approval').check();
  await page.getByLabel('Intro text').fill('Earn 20% on every sale.');
  await page.getByRole('button', { name: 'Add a question' }).click();
  await page.getByLabel('Question 1 id').fill('channel');
  await page.getByLabel('Question 1 label').fill('Where do you publish?');
  await page.getByLabel('Question 1 required').check();
  await page.getByRole('button', { name: 'Add a question' }).click();
  await page.getByLabel('Question 2 id').fill('audience');
  await page.getByLabel('Question 2 label').fill('Audience size');
  await page.getByLabel('Question 2 type').selectOption('SELECT');
  await page.getByLabel('Question 2 choices (comma-separated)').fill('Small, Large');
  await page.getByRole('button', { name: 'Save sign-up settings' }).click();
  await page.getByText('Saved.').waitFor();
  await page.getByRole('link', { name: `${system.gatewayUrl}/join/${slug}` }).waitFor();
  await checkPage(page, 'signup-settings');

  const settings = await okBody(program.api.get('/program'));
  expect(settings).toMatchObject({ slug, requireApproval: true, signup: { enabled: true, introText: 'Earn 20% on every sale.' } });
  expect(settings.signup.questions).toEqual([
    { id: 'channel', label: 'Where do you publish?', type: 'TEXT', required: true, options: [] },
    { id: 'audience', label: 'Audience size', type: 'SELECT', required: false, options: ['Small', 'Large'] },
  ]);
  const joinPage = await (await fetch(`${system.gatewayUrl}/join/${slug}`)).text();
  expect(joinPage).toContain('Where do you publish?');
  const applied = await fetch(`${system.gatewayUrl}/join/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', answers: { channel: 'A blog' } }),
  });
  expect(await applied.json()).toEqual({ status: 'PENDING' });
});

test('the approval queue the Sign-up page links to shows each waiting application with its answers; Approve makes it ACTIVE and Reject makes it REJECTED', async () => {
  const slug = `queue-${randomUUID().slice(0, 8)}`;
  await okBody(
    program.api.put('/program', {
      slug,
      requireApproval: true,
      signup: { enabled: true, questions: [{ id: 'channel', label: 'Where do you publish?', type: 'TEXT', required: true }] },
    }),
  );
  for (const [first, channel] of [
    ['Grace', 'A cooking blog'],
    ['Eve', 'Coupon spam'],
  ] as const) {
    const applied = await fetch(`${system.gatewayUrl}/join/${slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ firstName: first, lastName: 'Applicant', email: `${first.toLowerCase()}@example.com`, answers: { channel } }),
    });
    expect(applied.status).toBe(201);
  }
  const page = await signedIn();
  // The queue is the affiliates page's, linked from the Sign-up page.
  await page.getByRole('main').getByRole('link', { name: 'Approve and edit affiliates' }).click();
  await page.getByRole('heading', { level: 1, name: 'Affiliates' }).waitFor();
  const queue = page.getByRole('table', { name: 'Applications waiting for approval' });
  await queue.getByRole('cell', { name: 'grace@example.com', exact: true }).waitFor();
  await expect(queue.getByText('A cooking blog').isVisible()).resolves.toBe(true);
  await expect(queue.getByText('Coupon spam').isVisible()).resolves.toBe(true);
  await checkPage(page, 'signup-approval-queue');

  await page.getByRole('button', { name: 'Approve grace@example.com' }).click();
  await queue.getByRole('cell', { name: 'grace@example.com', exact: true }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Reject eve@example.com' }).click();
  await queue.getByRole('cell', { name: 'eve@example.com', exact: true }).waitFor({ state: 'detached' });
  expect((await okBody(program.api.get('/affiliates?email=grace@example.com'))).status).toBe('ACTIVE');
  expect((await okBody(program.api.get('/affiliates?email=eve@example.com'))).status).toBe('REJECTED');
});
