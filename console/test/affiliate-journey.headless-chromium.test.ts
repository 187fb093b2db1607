import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '@affiliate/platform/testing';
import { okBody, System, type Api } from '../../system-tests/harness';
import { checkPage, launchChromium, newPage, showing, signInAsMember, type PageWatch } from './chromium-pages';

/**
 * The whole affiliate journey of issue 30 in one real browser (Debian's chromium through
 * playwright-core) against the whole system as `npm start` runs it: the hosted sign-up page, the
 * console's approval queue, "view as affiliate", the portal with the affiliate's own code, a sale
 * with that code, and a second affiliate's portal. Each page a person sees is checked with axe-core,
 * and every request outside the gateway's origin is refused and recorded.
 */
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'journey');

let system: System;
let browser: Browser;
let program: { programId: string; key: string; api: Api; slug: string };
let coupon: { id: string };
let grace: { id: string };

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  system = await System.start();
  browser = await launchChromium();
  const created = await system.createProgram({
    name: 'Acme Outdoor',
    requireApproval: true,
    destinationUrls: [{ url: 'https://shop.example.com/' }],
  });
  coupon = await okBody(created.api.post('/coupons', { name: 'Partner discount', percentOff: 15 }));
  const slug = `acme-${randomUUID().slice(0, 8)}`;
  await okBody(
    created.api.put('/program', {
      slug,
      requireApproval: true,
      affiliateCouponIds: [coupon.id],
      signup: {
        enabled: true,
        introText: 'Earn a commission on every sale you send us.',
        questions: [{ id: 'channel', label: 'Where do you publish?', type: 'TEXT', required: true }],
      },
    }),
  );
  program = { ...created, slug };
  grace = await okBody(
    program.api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', affiliateLink: 'grace' }),
  );
  // The program requires approval, so an affiliate it creates itself waits too until approved.
  await okBody(program.api.put('/affiliates', { affiliateId: grace.id, status: 'ACTIVE' }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

const watch: PageWatch = { outside: [], pageErrors: [] };
const openPage = () => newPage(browser, system.gatewayUrl, watch);
const check = (page: Page, name: string) => checkPage(page, name, join(SCREENSHOTS, `${name}.png`));
const affiliateByEmail = (email: string) => okBody(program.api.get(`/affiliates?email=${encodeURIComponent(email)}`));

/** Reloads the page until the table, once loaded, contains what is expected: the portal reads the sale as it stands when the page loads. */
async function reloadUntilShowing(page: Page, table: string, expected: string): Promise<void> {
  await eventually(
    async () => {
      await page.reload();
      const locator = page.getByRole('table', { name: table });
      await showing(locator, /^(?![\s\S]*Loading…)/, 30_000);
      expect((await locator.textContent()) ?? '').toContain(expected);
    },
    30_000,
    200,
  );
}

test("an affiliate who signs up, is approved in the console and opens its portal sees its own code's sale and commission, and another affiliate's portal shows none of it", async () => {
  // 1. The applicant signs up on the hosted page with its answer.
  const email = `ada-${randomUUID().slice(0, 6)}@example.com`;
  const signup = await openPage();
  await signup.goto(`${system.gatewayUrl}/join/${program.slug}`);
  await signup.getByRole('heading', { name: 'Join Acme Outdoor' }).waitFor();
  await check(signup, 'join-form');
  await signup.getByLabel('First name').fill('Ada');
  await signup.getByLabel('Last name').fill('Byron');
  await signup.getByLabel('Email').fill(email);
  await signup.getByLabel('Where do you publish?').fill('A hiking blog');
  await signup.getByRole('button', { name: 'Apply' }).click();
  await signup.getByRole('heading', { name: 'Application received' }).waitFor();
  await check(signup, 'join-result');
  await signup.context().close();

  // 2. It waits for approval, with its answer and a first link of its own.
  const applied = await affiliateByEmail(email);
  expect(applied).toMatchObject({ status: 'PENDING', firstName: 'Ada', lastName: 'Byron' });
  expect(applied.signupAnswers.map((answer: { answer: string }) => answer.answer)).toEqual(['A hiking blog']);
  const adaLink: string = applied.affiliateLinks[0].link;

  // 3. The program team approves it in the console's approval queue, on the affiliates page the Sign-up page links to.
  const team = await openPage();
  await signInAsMember(team, system, program.programId, 'OWNER');
  await team.goto(`${system.gatewayUrl}/console#/signup`);
  await team.getByRole('main').getByRole('link', { name: 'Approve and edit affiliates' }).click();
  const queue = team.getByRole('table', { name: 'Applications waiting for approval' });
  await queue.getByRole('cell', { name: email, exact: true }).waitFor();
  await showing(queue, 'A hiking blog');
  await check(team, 'console-approval-queue');
  await team.getByRole('button', { name: `Approve ${email}` }).click();
  await queue.getByRole('cell', { name: email, exact: true }).waitFor({ state: 'detached' });
  await eventually(async () => expect((await affiliateByEmail(email)).status).toBe('ACTIVE'), 15_000, 200);

  // 4. "View as affiliate" gives the portal's session link.
  await team.goto(`${system.gatewayUrl}/console#/affiliates`);
  await team.getByRole('button', { name: 'View as Ada Byron' }).click();
  const portalLink = team.getByRole('link', { name: 'Open the portal of Ada Byron' });
  await showing(portalLink, 'Open the portal of Ada Byron');
  const sessionUrl = (await portalLink.getAttribute('href')) as string;
  expect(sessionUrl).toMatch(new RegExp(`^${system.gatewayUrl}/portal/open/`));
  await check(team, 'console-view-as-affiliate');
  await team.context().close();

  // 5. In its portal the affiliate sees its link and creates its own code.
  const portal = await openPage();
  const opened = await portal.goto(sessionUrl);
  expect(opened?.url()).toBe(`${system.gatewayUrl}/portal/`);
  await showing(portal.getByRole('heading', { level: 1 }), 'Welcome, Ada Byron');
  const fullUrl = portal.getByRole('textbox', { name: `Full URL of ${adaLink}` });
  await fullUrl.waitFor();
  expect(await fullUrl.inputValue()).toBe(`https://shop.example.com/?ref=${adaLink}`);
  await check(portal, 'portal');
  await portal.getByLabel('Discount').selectOption(coupon.id);
  await portal.getByLabel('Code', { exact: true }).fill('ADAHIKES');
  await portal.getByRole('button', { name: 'Create code' }).click();
  await showing(portal.getByRole('status').filter({ hasText: 'Code ADAHIKES created' }), 'Code ADAHIKES created');
  await showing(portal.getByRole('table', { name: 'Codes your customers can type at checkout' }), 'ADAHIKES');

  // 6. A sale with that code is the affiliate's, and its portal shows it with the commission.
  const sale = await okBody(program.api.post('/sales', { promoCode: 'ADAHIKES', totalEarned: 120 }));
  expect(sale.affiliateId).toBe(applied.id);
  expect(sale.commissionEarned).toBeGreaterThan(0);
  const commission = `${sale.commissionEarned.toFixed(2)} USD`;
  await reloadUntilShowing(portal, 'Sales', commission);
  await showing(portal.getByRole('table', { name: 'Sales' }), '120.00 USD');
  await showing(portal.getByRole('table', { name: 'Commissions' }), commission);
  await showing(portal.getByRole('table', { name: 'Statement per currency' }), commission);
  await check(portal, 'portal-with-sale');
  await portal.context().close();

  // 7. A second affiliate's portal, opened by a session link from the program's key, shows none of it.
  const session = await okBody(program.api.post('/affiliate-portal-sessions', { affiliateId: grace.id }));
  const other = await openPage();
  await other.goto(session.url);
  await showing(other.getByRole('heading', { level: 1 }), 'Welcome, Grace Hopper');
  await other.getByRole('textbox', { name: 'Full URL of grace' }).waitFor();
  await showing(other.getByRole('table', { name: 'Sales' }), 'No sale yet.');
  await showing(other.getByRole('table', { name: 'Codes your customers can type at checkout' }), 'You have no codes yet.');
  await showing(other.getByRole('table', { name: 'Statement per currency' }), 'No commission yet.');
  const text = (await other.locator('body').textContent()) ?? '';
  for (const theirs of ['ADAHIKES', 'Ada', email, `?ref=${adaLink}`, '120.00', commission]) expect(text).not.toContain(theirs);
  await check(other, 'portal-second-affiliate');
  await other.context().close();

  expect(watch.outside).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
}, 180_000);
