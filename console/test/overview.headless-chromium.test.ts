import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { okBody, System, type Api } from '../../system-tests/harness';
import { checkPage, launchChromium, newPage, showing, signInAsMember, type PageWatch } from './chromium-pages';

/**
 * The console's overview (issue 32) in a real browser against the whole system: the figures come from
 * GET /api/v1/reports/summary (the API's own counts, never a capped page), money stays per currency,
 * and the date range changes what is counted. Checked with axe-core; its screenshot is the README's
 * (docs/console-overview.png).
 */
const SCREENSHOT = join(__dirname, '..', '..', 'docs', 'console-overview.png');
const DAY = 86_400_000;

let system: System;
let browser: Browser;
let program: { programId: string; key: string; api: Api };
const watch: PageWatch = { outside: [], pageErrors: [] };

beforeAll(async () => {
  system = await System.start();
  browser = await launchChromium();
  program = await system.createProgram({ destinationUrls: [{ url: 'https://shop.example.com/' }] });
  await seed(program.api);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();

/**
 * Through the public API: a 20% plan, three affiliates, a referral, and sales paid today (100 USD,
 * 49.99 EUR), 3 days ago (200 USD), 10 days ago (300 USD) and 60 days ago (400 USD).
 */
async function seed(api: Api) {
  await okBody(
    api.post('/commission-plans', {
      name: 'Partners 20%',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  await okBody(api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', affiliateLink: 'ada' }));
  await okBody(api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' }));
  await okBody(api.post('/affiliates', { firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com' }));
  const referral = await okBody(api.post('/referrals', { link: 'ada', email: 'customer@example.com' }));
  for (const [ago, total] of [
    [0, 100],
    [3, 200],
    [10, 300],
    [60, 400],
  ] as const) {
    await okBody(api.post('/sales', { referralId: referral.id, totalEarned: total, paidAt: daysAgo(ago) }));
  }
  await okBody(api.post('/sales', { referralId: referral.id, totalEarned: 49.99, currency: 'EUR' }));
}

/** The sign-in step, one call: a new OWNER of the program's team, through the sign-in page. */
async function signedInPage(): Promise<Page> {
  const page = await newPage(browser, system.gatewayUrl, watch);
  await signInAsMember(page, system, program.programId, 'OWNER');
  return page;
}

const tile = (page: Page, name: string): Locator => page.locator('.tiles > div').filter({ has: page.getByText(name, { exact: true }) });

test('the overview shows the API\u2019s counts and money per currency for the last 30 days, never adding two currencies, and passes axe', async () => {
  const page = await signedInPage();
  await page.goto(`${system.gatewayUrl}/console#/overview`);
  await showing(tile(page, 'Sales'), 'Sales4');
  await showing(tile(page, 'Affiliates'), 'Affiliates33 new in the period');
  await showing(tile(page, 'Referrals'), 'Referrals11 in all');
  // 100 + 200 + 300 USD (the sale of 60 days ago is outside), and the EUR sale on its own line.
  await showing(tile(page, 'Revenue'), 'RevenueUS$600.00€49.99');
  await showing(tile(page, 'Commission'), 'CommissionUS$120.00€10.00');
  expect(await page.locator('.tiles').textContent()).not.toMatch(/649\.99|130 /);
  await showing(tile(page, 'Affiliates by status'), '3 active');
  // Full-width charts, one series per currency.
  expect(await page.getByRole('img', { name: /^Sales per day/ }).getAttribute('aria-label')).toContain('sales USD: 3; sales EUR: 1');
  expect(await page.getByRole('img', { name: /^Revenue and commission per day/ }).getAttribute('aria-label')).toContain(
    'revenue USD: 600; commission USD: 120; revenue EUR: 49.99; commission EUR: 10',
  );
  const widths = await page
    .locator('.chart canvas')
    .evaluateAll((canvases) => canvases.map((canvas) => canvas.getBoundingClientRect().width));
  const main = await page.locator('main').evaluate((element) => element.getBoundingClientRect().width);
  expect(widths).toHaveLength(3);
  for (const width of widths) expect(width).toBeGreaterThan(main * 0.8);
  await checkPage(page, 'overview', SCREENSHOT);
  await page.context().close();
});

test('the date range changes the figures: the 7 and 90 day presets, and a range of one day typed in', async () => {
  const page = await signedInPage();
  await page.goto(`${system.gatewayUrl}/console#/overview`);
  await showing(tile(page, 'Sales'), 'Sales4');

  await page.getByRole('button', { name: 'Last 7 days' }).click();
  await showing(tile(page, 'Sales'), 'Sales3');
  await showing(tile(page, 'Revenue'), 'RevenueUS$300.00€49.99');

  await page.getByRole('button', { name: 'Last 90 days' }).click();
  await showing(tile(page, 'Sales'), 'Sales5');
  await showing(tile(page, 'Revenue'), 'RevenueUS$1,000.00€49.99');

  // The day the sale of 10 days ago was paid, alone: that sale, and the reporting currency at 0.
  const day = daysAgo(10).slice(0, 10);
  await page.getByLabel('From').fill(day);
  await page.getByLabel('To (included)').fill(day);
  await page.getByRole('button', { name: 'Show' }).click();
  await showing(tile(page, 'Sales'), 'Sales1');
  await showing(tile(page, 'Revenue'), 'RevenueUS$300.00');
  expect(await tile(page, 'Revenue').textContent()).not.toContain('€');
  await showing(page.locator('.period'), `${day} to ${day}`);
  await page.context().close();
});

test('a range that ends before it starts shows the API\u2019s refusal', async () => {
  const page = await signedInPage();
  await page.goto(`${system.gatewayUrl}/console#/overview`);
  await showing(tile(page, 'Sales'), 'Sales4');
  await page.getByLabel('From').fill(daysAgo(1).slice(0, 10));
  await page.getByLabel('To (included)').fill(daysAgo(5).slice(0, 10));
  await page.getByRole('button', { name: 'Show' }).click();
  await showing(page.getByRole('alert'), 'to: must be after from');
  await page.context().close();
});

test('no page loaded anything from another origin or broke the Content-Security-Policy', () => {
  expect(watch.outside).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
});
