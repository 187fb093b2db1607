import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { okBody, System, type Api } from '../../system-tests/harness';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../gateway/src/console/routes';
import { checkPage, launchChromium, newPage, showing, signInAsMember, type PageWatch } from './chromium-pages';

/**
 * The affiliate portal (issue 30) in a real browser (Debian's chromium through playwright-core)
 * against the whole system as `npm start` runs it: opened from the console's "view as affiliate" and
 * from a session link, each page checked with axe-core, every request outside the gateway's origin
 * refused and recorded. The screenshot of the portal goes to docs/ for the README.
 */
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'portal');
const README_SCREENSHOT = join(__dirname, '..', '..', 'docs', 'affiliate-portal.png');

let system: System;
let browser: Browser;
let program: { programId: string; key: string; api: Api };
let ada: { id: string };
let grace: { id: string };
let coupon: { id: string };

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  system = await System.start();
  browser = await launchChromium();
  program = await system.createProgram({ name: 'Acme Shop', destinationUrls: [{ url: 'https://shop.example.com/' }] });
  ada = await okBody(
    program.api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', affiliateLink: 'ada' }),
  );
  grace = await okBody(
    program.api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', affiliateLink: 'grace' }),
  );
  coupon = await okBody(program.api.post('/coupons', { name: 'Partner discount', percentOff: 15 }));
  await okBody(program.api.put('/program', { affiliateCouponIds: [coupon.id] }));
  for (let index = 0; index < 3; index += 1) await okBody(program.api.post('/clicks', { link: 'ada' }));
  await okBody(program.api.post('/referrals', { link: 'ada', email: 'first.customer@example.com' }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

const watch: PageWatch = { outside: [], pageErrors: [] };
const openPage = () => newPage(browser, system.gatewayUrl, watch);
const check = (page: Page, name: string, screenshot = join(SCREENSHOTS, `${name}.png`)) => checkPage(page, name, screenshot);

/** The program's console, signed in as an owner, asks for Ada's portal ("view as affiliate"): the link it shows. */
async function viewAsAffiliateLink(name: string): Promise<string> {
  const page = await openPage();
  await signInAsMember(page, system, program.programId, 'OWNER');
  await page.goto(`${system.gatewayUrl}/console#/affiliates`);
  await page.getByRole('button', { name: `View as ${name}` }).click();
  const link = page.getByRole('link', { name: `Open the portal of ${name}` });
  await showing(link, `Open the portal of ${name}`);
  const url = (await link.getAttribute('href')) as string;
  await check(page, 'console-view-as-affiliate');
  await page.context().close();
  return url;
}

let adaLink = '';

test('from the console\'s "view as affiliate" the portal opens on the affiliate\'s own link, it creates its own code, and a sale with that code shows with its commission', async () => {
  adaLink = await viewAsAffiliateLink('Ada Byron');
  expect(adaLink).toMatch(new RegExp(`^${system.gatewayUrl}/portal/open/`));
  const page = await openPage();
  const opened = await page.goto(adaLink);
  expect(opened?.url()).toBe(`${system.gatewayUrl}/portal/`);
  expect(opened?.headers()['content-security-policy']).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  const [cookie] = await page.context().cookies();
  expect(cookie).toMatchObject({ name: 'affiliate_portal_session', path: '/portal', httpOnly: true, secure: true, sameSite: 'Lax' });
  expect(await page.evaluate('document.cookie')).toBe('');

  await showing(page.getByRole('heading', { level: 1 }), 'Welcome, Ada Byron');
  await page.getByRole('textbox', { name: 'Full URL of ada' }).waitFor();
  expect(await page.getByRole('textbox', { name: 'Full URL of ada' }).inputValue()).toBe('https://shop.example.com/?ref=ada');

  await page.getByLabel('Discount').selectOption(coupon.id);
  await page.getByLabel('Code', { exact: true }).fill('ADA15');
  await page.getByRole('button', { name: 'Create code' }).click();
  await showing(page.getByRole('status').filter({ hasText: 'Code ADA15 created' }), 'Code ADA15 created');
  await showing(page.getByRole('table', { name: 'Codes your customers can type at checkout' }), 'ADA15');

  const sale = await okBody(program.api.post('/sales', { promoCode: 'ADA15', totalEarned: 120 }));
  expect(sale.affiliateId).toBe(ada.id);
  const commission = `${sale.commissionEarned.toFixed(2)} USD`;
  await page.reload();
  await showing(page.getByRole('table', { name: 'Sales' }), commission);
  await showing(page.getByRole('table', { name: 'Sales' }), '120.00 USD');
  await showing(page.getByRole('table', { name: 'Commissions' }), commission);
  await showing(page.getByRole('table', { name: 'Statement per currency' }), commission);
  await showing(page.getByRole('table', { name: 'Referrals' }), 'f•••@example.com');
  await check(page, 'portal', README_SCREENSHOT);
  await page.context().close();
});

test("a second affiliate's portal shows none of the first one's link, code, sale or commission", async () => {
  const link = await okBody(program.api.post('/affiliate-portal-sessions', { affiliateId: grace.id }));
  const page = await openPage();
  await page.goto(link.url);
  await showing(page.getByRole('heading', { level: 1 }), 'Welcome, Grace Hopper');
  await page.getByRole('textbox', { name: 'Full URL of grace' }).waitFor();
  await showing(page.getByRole('table', { name: 'Sales' }), 'No sale yet.');
  await showing(page.getByRole('table', { name: 'Codes your customers can type at checkout' }), 'You have no codes yet.');
  await showing(page.getByRole('table', { name: 'Statement per currency' }), 'No commission yet.');
  expect(await page.getByRole('textbox', { name: 'Full URL of grace' }).inputValue()).toBe('https://shop.example.com/?ref=grace');
  const text = (await page.locator('body').textContent()) ?? '';
  for (const theirs of ['ADA15', 'Ada', '?ref=ada', '120.00']) expect(text).not.toContain(theirs);
  await check(page, 'portal-second-affiliate');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await showing(page.getByRole('heading', { level: 1 }), 'You have signed out');
  await check(page, 'portal-signed-out');
  const ended = await page.goto(`${system.gatewayUrl}/portal/`);
  expect(ended?.status()).toBe(401);
  await showing(page.getByRole('heading', { level: 1 }), 'Your portal session has ended');
  await check(page, 'portal-session-ended');
  await page.context().close();
});

test('a session link already used, or made up, is refused with a page that says so', async () => {
  const page = await openPage();
  const reused = await page.goto(adaLink);
  expect(reused?.status()).toBe(410);
  await showing(page.getByRole('heading', { level: 1 }), 'This portal link has already been used');
  expect(await page.context().cookies()).toEqual([]);
  await check(page, 'portal-link-used');
  const madeUp = await page.goto(`${system.gatewayUrl}/portal/open/not-a-link`);
  expect(madeUp?.status()).toBe(404);
  await showing(page.getByRole('heading', { level: 1 }), 'This portal link is not valid');
  await check(page, 'portal-link-not-valid');
  await page.context().close();
});

test('the statement shows each currency in its own decimals: KWD with three, JPY with none', async () => {
  await okBody(program.api.post('/promotional-codes', { couponId: coupon.id, code: 'GRACE-FX', affiliateId: grace.id }));
  const kwd = await okBody(program.api.post('/sales', { promoCode: 'GRACE-FX', totalEarned: 12.345, currency: 'KWD' }));
  const jpy = await okBody(program.api.post('/sales', { promoCode: 'GRACE-FX', totalEarned: 1234, currency: 'JPY' }));
  // Amounts whose last decimal two decimals would lose, or invent.
  expect(Math.round(kwd.commissionEarned * 1000) % 10).not.toBe(0);
  const link = await okBody(program.api.post('/affiliate-portal-sessions', { affiliateId: grace.id }));
  const page = await openPage();
  await page.goto(link.url);
  const statement = page.getByRole('table', { name: 'Statement per currency' });
  await showing(statement, `${kwd.commissionEarned.toFixed(3)} KWD`);
  await showing(statement, `${jpy.commissionEarned} JPY`);
  expect(await statement.textContent()).not.toContain(`${jpy.commissionEarned}.00 JPY`);
  await page.context().close();
});

test('no portal page loaded anything from another origin or broke the Content-Security-Policy', () => {
  expect(watch.outside).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
});
