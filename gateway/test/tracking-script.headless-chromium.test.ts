import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { parse } from 'acorn';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { okBody, System, type Api } from '../../system-tests/harness';
import { TRACKING_SCRIPT_PATH } from '../src/tracking/routes';

/**
 * The tracking script in a real browser (Debian's chromium through playwright-core), on a shop page
 * served from an origin of its own, against the whole system as `npm start` runs it. The shop's page
 * has a strict Content-Security-Policy of its own (scripts and calls to the gateway only), so the
 * script is proven to need no inline code, no eval and no other host.
 */
let system: System;
let browser: Browser;
let shop: Server;
let foreignShop: Server;
let shopOrigin = '';
let foreignOrigin = '';
let programA: { programId: string; key: string; api: Api; publishableKey: string };
let programB: { programId: string; key: string; api: Api; publishableKey: string };

/** A shop whose every page loads the tracking script with the key and attributes the test gives in its query. */
function startShop(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://shop.invalid');
    const key = url.searchParams.get('pk') ?? '';
    const extra = url.searchParams.get('attrs') ?? '';
    response.setHeader(
      'Content-Security-Policy',
      `default-src 'none'; script-src ${system.gatewayUrl}; connect-src ${system.gatewayUrl}; base-uri 'none'`,
    );
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>` +
        `<script src="${system.gatewayUrl}/js/affiliate.js" data-key="${key}" ${extra} defer></script></head>` +
        `<body><main><h1>Shop</h1></main></body></html>`,
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://localhost:${(server.address() as AddressInfo).port}` })),
  );
}

async function programWithAffiliate(
  link: string,
  allowedOrigins: string[],
  settings: Record<string, unknown> = {},
  moreLinks: string[] = [],
) {
  const program = await system.createProgram({ allowedOrigins, ...settings });
  for (const each of [link, ...moreLinks]) {
    await okBody(
      program.api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: `${each}@example.com`, affiliateLink: each }),
    );
  }
  const publishable = await okBody(program.api.post('/publishable-keys', {}));
  return { ...program, publishableKey: publishable.key as string };
}

beforeAll(async () => {
  system = await System.start();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    // shop.test and its subdomains resolve here, for the cross-subdomain cookie test.
    args: [
      '--host-resolver-rules=MAP *.shop.test 127.0.0.1',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  ({ server: shop, origin: shopOrigin } = await startShop());
  ({ server: foreignShop, origin: foreignOrigin } = await startShop());
  programA = await programWithAffiliate('ada', [shopOrigin]);
  programB = await programWithAffiliate('bob', [shopOrigin]);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  shop?.close();
  foreignShop?.close();
  await system?.stop();
});

// Headless Chromium says so in its User-Agent, and isbot counts it a bot (a test of its own below):
// the visitors of these tests present a desktop Chrome's.
const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const visitor = () => browser.newContext({ userAgent: DESKTOP_CHROME });

const clicksOf = async (program: { api: Api }, link: string): Promise<number> =>
  (await okBody(program.api.get(`/links?link=${link}`)))[0].clicks;

type Tracker = { clickId: number | null; visitorId: string | null };

async function land(
  context: BrowserContext,
  origin: string,
  query: string,
  publishableKey: string,
  attrs = '',
): Promise<{ page: Page; tracker: Tracker }> {
  const page = await context.newPage();
  await page.goto(`${origin}/landing?${query}&pk=${encodeURIComponent(publishableKey)}&attrs=${encodeURIComponent(attrs)}`);
  await page.waitForFunction(() => 'affiliate' in globalThis);
  const tracker = await page.evaluate(async () => {
    const affiliate = (globalThis as unknown as { affiliate: Tracker & { ready: Promise<unknown> } }).affiliate;
    await affiliate.ready;
    return { clickId: affiliate.clickId, visitorId: affiliate.visitorId };
  });
  return { page, tracker };
}

const convert = (page: Page, customer: Record<string, string>) =>
  page.evaluate(
    (body) => (globalThis as unknown as { affiliate: { convert: (customer: unknown) => Promise<unknown> } }).affiliate.convert(body),
    customer,
  );

test('the script is plain ES2017 and under 4 KB gzipped, and the gateway serves it cacheable with an ETag', async () => {
  const source = readFileSync(TRACKING_SCRIPT_PATH, 'utf8');
  expect(() => parse(source, { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
  expect(gzipSync(source).length).toBeLessThan(4096);
  const served = await fetch(`${system.gatewayUrl}/js/affiliate.js`);
  expect(await served.text()).toBe(source);
  expect(served.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(served.headers.get('cache-control')).toBe('public, max-age=300');
  const etag = served.headers.get('etag') ?? '';
  expect(etag).toMatch(/^"[A-Za-z0-9_-]{16}"$/);
  expect((await fetch(`${system.gatewayUrl}/js/affiliate.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  const versioned = await fetch(`${system.gatewayUrl}/js/affiliate.js?v=${etag.slice(1, -1)}`);
  expect(versioned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
});

test('landing with ?ref= counts one click and keeps its id in a first-party cookie; a reload within the dedup window counts none', async () => {
  const context = await visitor();
  try {
    const before = await clicksOf(programA, 'ada');
    const { page, tracker } = await land(context, shopOrigin, 'ref=ada', programA.publishableKey);
    expect(tracker.clickId).toEqual(expect.any(Number));
    expect(tracker.visitorId).toMatch(/^[0-9a-f]{32}$/);
    expect(await clicksOf(programA, 'ada')).toBe(before + 1);
    const cookies = await context.cookies(shopOrigin);
    expect(cookies.find((cookie) => cookie.name === 'aff_cid')?.value).toBe(String(tracker.clickId));
    expect(cookies.find((cookie) => cookie.name === 'aff_vid')?.value).toBe(tracker.visitorId);
    expect(cookies.every((cookie) => cookie.sameSite === 'Lax')).toBe(true);
    // Nothing was set for the gateway's own host: no third-party cookie.
    expect(await context.cookies(system.gatewayUrl)).toEqual([]);

    await page.reload();
    const again = await page.evaluate(async () => {
      const affiliate = (globalThis as unknown as { affiliate: Tracker & { ready: Promise<unknown> } }).affiliate;
      await affiliate.ready;
      return { clickId: affiliate.clickId, visitorId: affiliate.visitorId };
    });
    expect(again).toEqual(tracker);
    expect(await clicksOf(programA, 'ada')).toBe(before + 1);
  } finally {
    await context.close();
  }
});

test('convert creates the referral attributed to the affiliate of the click, and a second call answers the same referral', async () => {
  const context = await visitor();
  try {
    const { page, tracker } = await land(context, shopOrigin, 'ref=ada', programA.publishableKey);
    const first = (await convert(page, { email: 'buyer@example.com', name: 'Bu Yer', externalId: 'user-7' })) as {
      ok: boolean;
      referralId: string;
    };
    expect(first).toEqual({ ok: true, referralId: expect.any(String) });
    expect(await convert(page, { email: 'buyer@example.com' })).toEqual(first);
    const checkout = await context.newPage();
    await checkout.goto(`${shopOrigin}/checkout?pk=${programA.publishableKey}`);
    await checkout.waitForFunction(() => 'affiliate' in globalThis);
    expect(await convert(checkout, { email: 'buyer@example.com' })).toEqual(first);

    const referral = await okBody(programA.api.get(`/referrals?id=${first.referralId}`));
    const ada = await okBody(programA.api.get('/affiliates?email=ada@example.com'));
    expect(referral).toMatchObject({
      affiliateId: ada.id,
      clickId: tracker.clickId,
      email: 'buyer@example.com',
      referredUserExternalId: 'user-7',
      attribution: { method: 'CLICK', clickId: tracker.clickId, affiliateId: ada.id },
    });
    expect(await okBody(programA.api.get('/referrals?email=buyer@example.com'))).toHaveLength(1);
  } finally {
    await context.close();
  }
});

test('a page of an origin the program does not allow is refused by CORS and counts nothing', async () => {
  const context = await visitor();
  try {
    const before = await clicksOf(programA, 'ada');
    const warnings: string[] = [];
    const page = await context.newPage();
    page.on('console', (message) => warnings.push(message.text()));
    await page.goto(`${foreignOrigin}/landing?ref=ada&pk=${programA.publishableKey}`);
    await page.waitForFunction(() => 'affiliate' in globalThis);
    const clickId = await page.evaluate(async () => {
      const affiliate = (globalThis as unknown as { affiliate: Tracker & { ready: Promise<unknown> } }).affiliate;
      await affiliate.ready;
      return affiliate.clickId;
    });
    expect(clickId).toBeNull();
    expect(warnings.some((text) => /CORS|Access-Control-Allow-Origin/.test(text))).toBe(true);
    expect(await clicksOf(programA, 'ada')).toBe(before);
  } finally {
    await context.close();
  }
});

test("a publishable key of program A never reaches program B's links", async () => {
  const context = await visitor();
  try {
    const before = await clicksOf(programB, 'bob');
    const { tracker } = await land(context, shopOrigin, 'ref=bob', programA.publishableKey);
    expect(tracker.clickId).toBeNull();
    expect(await clicksOf(programB, 'bob')).toBe(before);
  } finally {
    await context.close();
  }
});

test("a headless browser's visit is a bot's: answered, not counted, no click cookie", async () => {
  const context = await browser.newContext();
  try {
    const before = await clicksOf(programA, 'ada');
    const { tracker } = await land(context, shopOrigin, 'ref=ada', programA.publishableKey);
    expect(tracker.clickId).toBeNull();
    expect((await context.cookies(shopOrigin)).map((cookie) => cookie.name)).toEqual(['aff_vid']);
    expect(await clicksOf(programA, 'ada')).toBe(before);
  } finally {
    await context.close();
  }
});

test('under FIRST_CLICK a later click does not replace a live one; under LAST_CLICK it does; the referral follows', async () => {
  for (const [model, firstLink, lastLink] of [
    ['FIRST_CLICK', 'earlier-f', 'later-f'],
    ['LAST_CLICK', 'earlier-l', 'later-l'],
  ] as const) {
    const program = await programWithAffiliate(firstLink, [shopOrigin], { attributionModel: model }, [lastLink]);
    const context = await visitor();
    try {
      const first = (await land(context, shopOrigin, `ref=${firstLink}`, program.publishableKey)).tracker;
      const { page, tracker } = await land(context, shopOrigin, `ref=${lastLink}`, program.publishableKey);
      // Both clicks counted; the page keeps the one the program credits.
      expect(await clicksOf(program, lastLink)).toBe(1);
      if (model === 'FIRST_CLICK') expect(tracker.clickId).toBe(first.clickId);
      else expect(tracker.clickId).toBeGreaterThan(first.clickId ?? Infinity);
      const converted = (await convert(page, { email: `${lastLink}@customers.example.com` })) as { referralId: string };
      const referral = await okBody(program.api.get(`/referrals?id=${converted.referralId}`));
      const credited = await okBody(program.api.get(`/affiliates?email=${model === 'FIRST_CLICK' ? firstLink : lastLink}@example.com`));
      expect({ model, affiliateId: referral.affiliateId }).toEqual({ model, affiliateId: credited.id });
    } finally {
      await context.close();
    }
  }
});

test("the click cookie lives as long as the program's attribution window", async () => {
  const program = await programWithAffiliate('windowed', [shopOrigin], { attributionWindowDays: 30 });
  const context = await visitor();
  try {
    await land(context, shopOrigin, 'ref=windowed', program.publishableKey);
    const click = (await context.cookies(shopOrigin)).find((cookie) => cookie.name === 'aff_cid');
    const days = ((click?.expires ?? 0) * 1000 - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
  } finally {
    await context.close();
  }
});

test('a visitor who did not come through a link is not tracked: no cookie, and convert answers NOT_REFERRED', async () => {
  const context = await visitor();
  try {
    const { page, tracker } = await land(context, shopOrigin, 'utm_source=newsletter', programA.publishableKey);
    expect(tracker).toEqual({ clickId: null, visitorId: null });
    expect(await convert(page, { email: 'organic@example.com' })).toEqual({ ok: false, reason: 'NOT_REFERRED' });
    expect(await context.cookies(shopOrigin)).toEqual([]);
    expect(await okBody(programA.api.get('/referrals?email=organic@example.com'))).toEqual([]);
  } finally {
    await context.close();
  }
});

test('a second customer converting in the same browser gets a referral of their own', async () => {
  const context = await visitor();
  try {
    const { page } = await land(context, shopOrigin, 'ref=ada', programA.publishableKey);
    const first = (await convert(page, { email: 'first-customer@example.com' })) as { referralId: string };
    const second = (await convert(page, { email: 'second-customer@example.com' })) as { referralId: string };
    expect(second.referralId).not.toBe(first.referralId);
    expect((await okBody(programA.api.get(`/referrals?id=${second.referralId}`))).email).toBe('second-customer@example.com');
    const cookies = await context.cookies(shopOrigin);
    // No email in any cookie: only a short tag of it beside the referral id.
    expect(cookies.some((cookie) => decodeURIComponent(cookie.value).includes('@'))).toBe(false);
  } finally {
    await context.close();
  }
});

test('with data-cookie-domain, a click on www. is converted on app. of the same site', async () => {
  const port = Number(new URL(shopOrigin).port);
  const www = `http://www.shop.test:${port}`;
  const app = `http://app.shop.test:${port}`;
  const program = await programWithAffiliate('subdomains', [www, app]);
  const context = await visitor();
  try {
    const { tracker } = await land(context, www, 'ref=subdomains', program.publishableKey, 'data-cookie-domain="shop.test"');
    expect(tracker.clickId).toEqual(expect.any(Number));
    const checkout = await context.newPage();
    await checkout.goto(`${app}/signup?pk=${program.publishableKey}&attrs=${encodeURIComponent('data-cookie-domain="shop.test"')}`);
    await checkout.waitForFunction(() => 'affiliate' in globalThis);
    const converted = (await convert(checkout, { email: 'subdomain@example.com' })) as { ok: boolean; referralId: string };
    expect(converted.ok).toBe(true);
    expect((await okBody(program.api.get(`/referrals?id=${converted.referralId}`))).clickId).toBe(tracker.clickId);
  } finally {
    await context.close();
  }
});

test('with data-respect-dnt, Do Not Track turns the script off too', async () => {
  const context = await visitor();
  try {
    await context.addInitScript(() =>
      Object.defineProperty((globalThis as unknown as { navigator: object }).navigator, 'doNotTrack', { value: '1' }),
    );
    const before = await clicksOf(programA, 'ada');
    const { tracker } = await land(context, shopOrigin, 'ref=ada', programA.publishableKey, 'data-respect-dnt');
    expect(tracker).toEqual({ clickId: null, visitorId: null });
    expect(await context.cookies(shopOrigin)).toEqual([]);
    expect(await clicksOf(programA, 'ada')).toBe(before);
  } finally {
    await context.close();
  }
});

test('with data-respect-dnt, Global Privacy Control turns the script off: no cookie, no click, no referral', async () => {
  const context = await visitor();
  try {
    await context.addInitScript(() =>
      Object.defineProperty((globalThis as unknown as { navigator: object }).navigator, 'globalPrivacyControl', { value: true }),
    );
    const before = await clicksOf(programA, 'ada');
    const { page, tracker } = await land(context, shopOrigin, 'ref=ada', programA.publishableKey, 'data-respect-dnt');
    expect(tracker).toEqual({ clickId: null, visitorId: null });
    expect(await convert(page, { email: 'private@example.com' })).toEqual({ ok: false, reason: 'DO_NOT_TRACK' });
    expect(await context.cookies(shopOrigin)).toEqual([]);
    expect(await clicksOf(programA, 'ada')).toBe(before);
    expect(await okBody(programA.api.get('/referrals?email=private@example.com'))).toEqual([]);
  } finally {
    await context.close();
  }
});
