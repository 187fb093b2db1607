import { readFileSync } from 'node:fs';
import { GUIDES } from '../src/docs/routes';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { RunningGateway } from '../src/gateway';
import { allUpstreams, startEchoUpstream, startGateway, type EchoUpstream } from './support';

/**
 * The docs page as a newcomer sees it: rendered by a real browser (Debian's chromium, installed by
 * scripts/local-infra.sh) with every network request outside the gateway refused, so a CDN
 * dependency would show up as a blank page.
 */
let upstream: EchoUpstream;
let gateway: RunningGateway;
let browser: Browser;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url) });
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
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await upstream?.stop();
});

test('/docs/explorer (Swagger UI) renders every operation of the OpenAPI document offline', async () => {
  const page = await browser.newPage();
  const outside: string[] = [];
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(gateway.url)) return route.continue();
    outside.push(route.request().url());
    return route.abort();
  });
  await page.goto(`${gateway.url}/docs/explorer`);
  await page.waitForSelector('.opblock', { timeout: 30_000 });
  const operations = await page.locator('.opblock-summary-path').allTextContents();
  expect(operations).toEqual(
    expect.arrayContaining(['/api/v1/coupons', '/api/v1/promotional-codes', '/api/v1/sales', '/admin/v1/programs']),
  );
  expect(await page.locator('.info .title').textContent()).toContain('Affiliate Program Service API');
  expect(outside).toEqual([]);
});

/** Every request outside the gateway (refused), and every CSP refusal or script error the page reported. */
async function watchedPage(): Promise<{ page: Page; outside: string[]; refusals: string[] }> {
  const page = await browser.newPage();
  const outside: string[] = [];
  const refusals: string[] = [];
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(gateway.url)) return route.continue();
    outside.push(route.request().url());
    return route.abort();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) refusals.push(message.text());
  });
  page.on('pageerror', (error) => refusals.push(error.message));
  return { page, outside, refusals };
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
async function seriousViolations(page: Page, within?: string): Promise<{ id: string; nodes: string[] }[]> {
  await page.evaluate(AXE);
  const context = within ? `{ include: [['.docs-bar'], [${JSON.stringify(within)}]] }` : 'document';
  const violations = (await page.evaluate(
    `axe.run(${context}).then((result) => result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.map((node) => node.target.join(' ')).slice(0, 3) })))`,
  )) as { id: string; impact: string; nodes: string[] }[];
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(({ id, nodes }) => ({ id, nodes }));
}

test('/docs is the Redoc reference: every operation with its code samples, offline, with no CSP refusal and no serious accessibility violation, and links to every guide', async () => {
  const { page, outside, refusals } = await watchedPage();
  await page.goto(`${gateway.url}/docs`);
  await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60_000 });
  const operations = await page
    .locator('[data-section-id^="operation/"]')
    .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-section-id')));
  expect(operations).toEqual(
    expect.arrayContaining(['operation/createCoupon', 'operation/createSale', 'operation/getSales', 'operation/createProgram']),
  );
  // The x-codeSamples of an operation, as Redoc shows them in its right panel.
  const createSale = page.locator('[data-section-id="operation/createSale"]');
  for (const label of ['curl', 'TypeScript', 'Python'])
    expect(await createSale.locator('[role="tab"]', { hasText: label }).count()).toBeGreaterThan(0);
  for (const { name } of GUIDES) expect(await page.locator(`nav a[href="/docs/guides/${name}"]`).count()).toBe(1);
  // axe-core on the bar and one whole operation (examples and samples included): the whole page takes minutes.
  expect(await seriousViolations(page, '[data-section-id="operation/createSale"]')).toEqual([]);
  expect({ outside, refusals }).toEqual({ outside: [], refusals: [] });
}, 120_000);

test('each guide renders under its strict CSP, offline, with no serious accessibility violation', async () => {
  for (const { name, title } of GUIDES) {
    const { page, outside, refusals } = await watchedPage();
    await page.goto(`${gateway.url}/docs/guides/${name}`);
    expect(await page.locator('main h1').first().textContent()).toBe(title);
    expect({ name, violations: await seriousViolations(page), outside, refusals }).toEqual({
      name,
      violations: [],
      outside: [],
      refusals: [],
    });
    await page.close();
  }
}, 120_000);
