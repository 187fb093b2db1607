import { chromium, type Browser } from 'playwright-core';
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
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await upstream?.stop();
});

test('/docs renders every operation of the OpenAPI document offline', async () => {
  const page = await browser.newPage();
  const outside: string[] = [];
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(gateway.url)) return route.continue();
    outside.push(route.request().url());
    return route.abort();
  });
  await page.goto(`${gateway.url}/docs`);
  await page.waitForSelector('.opblock', { timeout: 30_000 });
  const operations = await page.locator('.opblock-summary-path').allTextContents();
  expect(operations).toEqual(expect.arrayContaining(['/api/v1/coupons', '/api/v1/promotional-codes', '/api/v1/sales', '/admin/v1/programs']));
  expect(await page.locator('.info .title').textContent()).toContain('Affiliate Program Service API');
  expect(outside).toEqual([]);
});
