import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { okBody, System, type Api } from '../../system-tests/harness';

/**
 * The hosted sign-up page in a real browser (Debian's chromium through playwright-core) against the
 * whole system: an applicant fills it in and sees the result, a bot falls into the honeypot, and the
 * page embedded in a shop's iframe works where the program allows that shop's origin and is refused
 * everywhere else. axe-core checks the form and the result page.
 */
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'signup');

let system: System;
let browser: Browser;
let allowedShop: { server: Server; origin: string };
let foreignShop: { server: Server; origin: string };
let program: { programId: string; api: Api; slug: string };
const outside: string[] = [];

/** A shop page that embeds the sign-up page of the slug in its query. */
function startShop(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const slug = new URL(request.url ?? '/', 'http://shop.invalid').searchParams.get('slug') ?? '';
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Partners</title></head><body><main><h1>Become a partner</h1><iframe title="Sign-up" src="${system.gatewayUrl}/join/${slug}" width="600" height="900"></iframe></main></body></html>`,
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://localhost:${(server.address() as AddressInfo).port}` })),
  );
}

beforeAll(async () => {
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
  allowedShop = await startShop();
  foreignShop = await startShop();
  const created = await system.createProgram({ name: 'Acme Outdoor', requireApproval: true, allowedOrigins: [allowedShop.origin] });
  const slug = `acme-${randomUUID().slice(0, 8)}`;
  await okBody(
    created.api.put('/program', {
      slug,
      signup: {
        enabled: true,
        introText: 'Earn 20% on every sale you send us.',
        termsUrl: 'https://shop.example.com/partner-terms',
        questions: [
          { id: 'channel', label: 'Where do you publish?', type: 'TEXT', required: true },
          { id: 'site', label: 'Your website', type: 'URL', required: true },
          {
            id: 'audience',
            label: 'Audience size',
            type: 'SELECT',
            required: true,
            options: ['Under 1,000', '1,000 to 10,000', 'Over 10,000'],
          },
          { id: 'pitch', label: 'Why should we pick you?', type: 'LONG_TEXT' },
        ],
      },
    }),
  );
  program = { ...created, slug };
}, 180_000);

afterAll(async () => {
  await browser?.close();
  allowedShop?.server.close();
  foreignShop?.server.close();
  await system?.stop();
});

async function newPage(): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  // Nothing but the gateway and the test's shops: the page must need no third-party resource.
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if ([system.gatewayUrl, allowedShop.origin, foreignShop.origin].some((origin) => url.startsWith(origin))) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return page;
}

async function expectNoSeriousViolation(frame: Page | Frame, name: string) {
  await frame.evaluate(AXE);
  const violations = (await frame.evaluate(
    `axe.run(document).then((result) => result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.map((node) => node.target.join(' ')).slice(0, 3) })))`,
  )) as { impact: string }[];
  expect({
    page: name,
    violations: violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical'),
  }).toEqual({ page: name, violations: [] });
  if ('screenshot' in frame) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await frame.screenshot({ path: join(SCREENSHOTS, `${name.replace(/ /g, '-')}.png`), fullPage: true });
  }
}

async function fillApplication(frame: Page | Frame, email: string) {
  await frame.getByLabel('First name').fill('Grace');
  await frame.getByLabel('Last name').fill('Hopper');
  await frame.getByLabel('Email').fill(email);
  await frame.getByLabel('Where do you publish?').fill('A cooking blog');
  await frame.getByLabel('Your website').fill('https://grace.example.com');
  await frame.getByLabel('Audience size').selectOption('1,000 to 10,000');
  await frame.getByLabel('Why should we pick you?').fill('Ten years of recipes.');
}

const affiliateByEmail = (email: string) => okBody(program.api.get(`/affiliates?email=${encodeURIComponent(email)}`));

test('an applicant fills in the answers, submits and sees the result; the affiliate waits for approval with its answers, and both pages pass axe', async () => {
  const page = await newPage();
  const response = await page.goto(`${system.gatewayUrl}/join/${program.slug}`);
  expect(response?.headers()['content-security-policy']).toContain(`frame-ancestors ${allowedShop.origin}`);
  expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
  await expect(page.getByRole('heading', { name: 'Join Acme Outdoor' }).isVisible()).resolves.toBe(true);
  await expect(page.getByText('Earn 20% on every sale you send us.').isVisible()).resolves.toBe(true);
  await expectNoSeriousViolation(page, 'sign-up form');

  const email = `grace-${randomUUID().slice(0, 6)}@example.com`;
  await fillApplication(page, email);
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('heading', { name: 'Application received' }).waitFor();
  await expect(page.getByText('is waiting for review').isVisible()).resolves.toBe(true);
  await expectNoSeriousViolation(page, 'sign-up result');

  const affiliate = await affiliateByEmail(email);
  expect(affiliate.status).toBe('PENDING');
  expect(affiliate.signupAnswers.map((answer: { answer: string }) => answer.answer)).toEqual([
    'A cooking blog',
    'https://grace.example.com',
    '1,000 to 10,000',
    'Ten years of recipes.',
  ]);
  expect(outside).toEqual([]);
});

test('a bot that fills the hidden honeypot field is shown the same result, and no affiliate is created', async () => {
  const page = await newPage();
  await page.goto(`${system.gatewayUrl}/join/${program.slug}`);
  const email = `bot-${randomUUID().slice(0, 6)}@example.com`;
  await fillApplication(page, email);
  // A person never sees it (off screen, out of the tab order); a bot filling every field does.
  await page.locator('input[name="website"]').fill('https://spam.example', { force: true });
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('heading', { name: 'Application received' }).waitFor();
  expect(await affiliateByEmail(email)).toBeNull();
});

test('embedded in an iframe on an allowed origin the form works; on any other origin the browser refuses to show it', async () => {
  const page = await newPage();
  await page.goto(`${allowedShop.origin}/?slug=${program.slug}`);
  const embedded = page.frameLocator('iframe[title="Sign-up"]');
  await embedded.getByRole('heading', { name: 'Join Acme Outdoor' }).waitFor();
  const email = `framed-${randomUUID().slice(0, 6)}@example.com`;
  await fillApplication(
    page.frames().find((frame) => frame.url().includes('/join/'))!,
    email,
  );
  await embedded.getByRole('button', { name: 'Apply' }).click();
  await embedded.getByRole('heading', { name: 'Application received' }).waitFor();
  expect((await affiliateByEmail(email)).status).toBe('PENDING');

  const foreign = await newPage();
  const refused = foreign.waitForEvent('console', { predicate: (message) => /frame-ancestors/.test(message.text()), timeout: 15_000 });
  await foreign.goto(`${foreignShop.origin}/?slug=${program.slug}`);
  await refused;
  const child = foreign.frames().find((frame) => frame !== foreign.mainFrame())!;
  expect(await child.locator('form').count()).toBe(0);
});

test('the refused-application page (an email already in the program) and the 404 page pass axe', async () => {
  const email = `twice-${randomUUID().slice(0, 6)}@example.com`;
  for (const attempt of [1, 2]) {
    const page = await newPage();
    await page.goto(`${system.gatewayUrl}/join/${program.slug}`);
    await fillApplication(page, email);
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.getByRole('button', { name: 'Apply' }).click(),
    ]);
    await page.waitForLoadState();
    if (attempt === 1) continue;
    expect(answer.status()).toBe(400);
    await expect(page.getByText(`an affiliate with email ${email} already exists in this program`).isVisible()).resolves.toBe(true);
    await expectNoSeriousViolation(page, 'sign-up refused');
  }
  const missing = await newPage();
  const notFound = await missing.goto(`${system.gatewayUrl}/join/no-such-program-${randomUUID().slice(0, 6)}`);
  expect(notFound?.status()).toBe(404);
  await expectNoSeriousViolation(missing, 'sign-up not found');
  expect(outside).toEqual([]);
});
