import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { okBody, System, type Api } from '../../system-tests/harness';
import { signInAsMember } from './chromium-pages';

/**
 * The console's Sign-up and approval page in headless Chromium against the whole system, beside
 * console.headless-chromium.test.ts: the sign-up settings saved from the page open /join/{slug} with
 * those questions, and new affiliates wait for approval (the approval queue itself, on the affiliates
 * page the Sign-up page links to, is program-pages-a.headless-chromium.test.ts's).
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
  await signInAsMember(page, system, program.programId, 'OWNER');
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
