import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLIC_EVENT_TYPES } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import type { Browser, Locator, Page } from 'playwright-core';
import { ADMIN_TOKEN, okBody, Subscriber, System, type Api } from '../../system-tests/harness';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../gateway/src/console/routes';
import {
  checkPage as checkAndCapture,
  createMember,
  launchChromium,
  newPage as openPage,
  showing,
  signInAsMember,
  type TestMember,
} from './chromium-pages';

/**
 * The console in a real browser (Debian's chromium through playwright-core) against the whole
 * system as `npm start` runs it: each component its own process. Every request that leaves the
 * gateway's origin is refused and recorded, every page is checked with axe-core, and a screenshot of
 * each page is written under test-results/console/ for a person to look at.
 */
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'console');

let system: System;
let browser: Browser;
const subscriber = new Subscriber();
let program: { programId: string; key: string; api: Api };
const outside: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  system = await System.start();
  browser = await launchChromium();
  program = await system.createProgram({ destinationUrls: [{ url: 'https://shop.example.com/' }] });
  await seed(program.api);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await subscriber.stop();
  await system?.stop();
});

/** A little of everything, through the public API, so that every page has real data to show. */
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
  const ada = await okBody(
    api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', affiliateLink: 'ada' }),
  );
  await okBody(api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', affiliateLink: 'grace' }));
  for (let index = 0; index < 3; index += 1) await okBody(api.post('/clicks', { link: 'ada' }));
  const referral = await okBody(api.post('/referrals', { link: 'ada', email: 'customer@example.com', name: 'Sam Customer' }));
  const coupon = await okBody(api.post('/coupons', { name: 'Spring', percentOff: 20 }));
  await okBody(api.post('/promotional-codes', { couponId: coupon.id, code: 'SPRING20', affiliateId: ada.id }));
  const day = 86_400_000;
  for (const [ago, total] of [
    [6, 120],
    [4, 80],
    [2, 200],
    [1, 50],
    [0, 99],
  ] as const) {
    await okBody(
      api.post('/sales', { referralId: referral.id, totalEarned: total, paidAt: new Date(Date.now() - ago * day).toISOString() }),
    );
  }
  await okBody(api.post('/sales', { promoCode: 'SPRING20', totalEarned: 60 }));
  // A sale in another currency: the overview shows it apart, never added to the dollars.
  await okBody(api.post('/sales', { referralId: referral.id, totalEarned: 49.99, currency: 'EUR' }));
  // More referrals than one page of the console (50), so that its paging is the API's.
  for (let index = 0; index < 54; index += 1) await okBody(api.post('/referrals', { link: 'grace', email: `paged-${index}@example.com` }));
}

const newPage = () => openPage(browser, system.gatewayUrl, { outside, pageErrors });

/** The program's pages as an OWNER of its team (a new member each time, invited by the operator); the operator's with the admin token. */
async function signIn(page: Page, kind: 'owner' | 'operator', token?: string): Promise<TestMember | null> {
  if (kind === 'owner') return signInAsMember(page, system, program.programId, 'OWNER');
  await page.goto(`${system.gatewayUrl}/console`);
  await page.getByLabel('Operator').check();
  await page.getByLabel('Admin token', { exact: true }).fill(token ?? '');
  await page.getByRole('button', { name: 'Sign in' }).click();
  return null;
}

const checkPage = (page: Page, name: string) => checkAndCapture(page, name, join(SCREENSHOTS, `${name}.png`));

const go = (page: Page, route: string) => page.goto(`${system.gatewayUrl}/console#/${route}`);

test('/console is served with a Content-Security-Policy that allows this origin only', async () => {
  const response = await fetch(`${system.gatewayUrl}/console`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  expect(CONSOLE_CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  const script = await fetch(`${system.gatewayUrl}/console/assets/app.js`);
  expect(script.headers.get('content-type')).toMatch(/javascript/);
});

test('bad credentials get a clear message and nothing is kept in the tab', async () => {
  const page = await newPage();
  const member = await createMember(system, program.programId, 'OWNER');
  await page.goto(`${system.gatewayUrl}/console`);
  await page.getByLabel('Email', { exact: true }).fill(member.email);
  await page.getByLabel('Password', { exact: true }).fill('not the password at all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await showing(page.getByRole('alert'), 'Wrong email or password');
  await signIn(page, 'operator', 'not-the-admin-token');
  await showing(page.getByRole('alert'), /That admin token was not accepted/);
  expect(await page.evaluate('sessionStorage.length')).toBe(0);
  await checkPage(page, 'sign-in-refused');
  await page.context().close();
});

test('program view: create an endpoint, an event arrives and its delivery appears, resend it, rotate and reveal the secret, send a test event', async () => {
  const page = await newPage();
  await signIn(page, 'owner');
  await go(page, 'webhooks');
  await page.getByLabel('URL').fill(await subscriber.start());
  await page.getByLabel('Description').fill('Shop backend');
  await page.getByRole('group', { name: 'Event types to receive' }).getByLabel('affiliate.created').check();
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  await showing(page.getByRole('status').filter({ hasText: 'Endpoint created' }), 'whsec_');
  // A member's session is the httpOnly cookie: nothing of it is in the tab's storage.
  expect(await page.evaluate('Object.keys(sessionStorage)')).toEqual([]);

  await okBody(program.api.post('/affiliates', { firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com' }));
  const row = page.locator('.deliveries').getByRole('row').filter({ hasText: 'affiliate.created' });
  await poll(page, async () => (await row.filter({ hasText: 'succeeded' }).count()) === 1);
  await showing(row, '200');

  await row.getByRole('button', { name: 'Resend' }).click();
  await poll(page, async () => (await row.locator('td').nth(3).textContent()) === '2');
  expect(subscriber.events('affiliate.created').length).toBeGreaterThanOrEqual(2);

  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await showing(page.getByRole('status').filter({ hasText: /^Signing secret/ }), 'the previous secret keeps signing beside it until');
  const [endpoint] = await okBody(program.api.get('/webhook-endpoints'));
  await page.getByRole('button', { name: 'Reveal secret' }).click();
  const revealed = await okBody(program.api.get(`/webhook-endpoints/secret?webhookEndpointId=${endpoint.id}`));
  await showing(page.locator('code.secret'), revealed.secret);

  await page.getByRole('button', { name: 'Send test event' }).click();
  await showing(page.getByRole('status').filter({ hasText: 'Test event' }), 'Test event delivered');
  await page.getByLabel('Status').selectOption('succeeded');
  await counting(row, 1);
  await checkPage(page, 'webhooks');
  await page.context().close();
});

test('an API error is shown with its message, never a blank page', async () => {
  const page = await newPage();
  await signIn(page, 'owner');
  await go(page, 'webhooks');
  await page.getByLabel('URL').fill('https://example.com/hooks');
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  await showing(page.getByRole('alert'), 'eventTypes');
  await page.getByRole('heading', { name: 'Webhooks' }).first().waitFor({ timeout: 10_000 });
  await page.context().close();
});

test('every program page shows the program\u2019s real data and passes axe', async () => {
  const page = await newPage();
  await signIn(page, 'owner');
  await go(page, 'overview');
  await showing(page.locator('.tiles'), 'Sales7');
  // Revenue and commission per currency, the reporting currency first: 609 USD and 49.99 EUR, never 658.99.
  const tile = (name: string) => page.locator('.tiles div').filter({ has: page.getByText(name, { exact: true }) });
  await showing(tile('Revenue'), 'RevenueUS$609.00€49.99');
  await showing(tile('Commission'), 'CommissionUS$121.80€10.00');
  expect(await page.locator('.tiles').textContent()).not.toMatch(/658\.99|131\.8/);
  await counting(page.locator('.chart canvas'), 3);
  await showing(page.locator('.chart figcaption').nth(1), 'Revenue and commission per day, in USD');
  expect(await page.getByRole('img', { name: /Revenue and commission per day/ }).getAttribute('aria-label')).toContain(
    'revenue USD: 609; commission USD: 121.8',
  );
  await checkPage(page, 'overview');

  const expected: Record<string, string> = {
    affiliates: 'ada@example.com',
    links: 'ada',
    codes: 'SPRING20',
    referrals: 'paged-53@example.com',
    sales: '120 USD',
  };
  for (const [route, text] of Object.entries(expected)) {
    await go(page, route);
    await showing(page.locator('tbody'), text);
    await checkPage(page, route);
  }
  await go(page, 'affiliates');
  await page.getByLabel('Value').fill('grace@example.com');
  await page.getByRole('button', { name: 'Search' }).click();
  await counting(page.locator('tbody tr'), 1);
  await showing(page.locator('tbody'), 'Grace Hopper');

  await go(page, 'referrals');
  await counting(page.locator('tbody tr'), 50);
  await page.getByRole('button', { name: 'Next page' }).click();
  await counting(page.locator('tbody tr'), 5);
  // The oldest, on the second page.
  await showing(page.locator('tbody'), 'customer@example.com');

  await go(page, 'events');
  await showing(page.getByRole('heading', { level: 2, name: /event types$/ }), `${PUBLIC_EVENT_TYPES.length} event types`);
  await showing(page.getByLabel('Verification snippet'), 'new Webhook(process.env.WEBHOOK_SECRET)');
  await checkPage(page, 'events');
  await page.context().close();
});

test('tracking page: a publishable key and its snippet, allowed origins and attribution saved, and its link to the Stripe webhook URL and secret on Program settings', async () => {
  const page = await newPage();
  await signIn(page, 'owner');
  await go(page, 'tracking');
  await showing(page.getByRole('status'), 'No publishable key yet');
  await page.getByRole('button', { name: 'Create a publishable key' }).click();
  await showing(
    page.getByLabel('The snippet to paste'),
    /^<script src="http:\/\/127\.0\.0\.1:\d+\/js\/affiliate\.js" data-key="pk_live_[A-Za-z0-9_-]+" defer><\/script>$/,
  );
  const key = (await page.getByLabel('The snippet to paste').textContent())?.match(/pk_live_[A-Za-z0-9_-]+/)?.[0];
  expect((await okBody(program.api.get('/publishable-keys')))[0].key).toBe(key);

  await page.getByLabel(/Allowed origins/).fill('https://shop.example.com\nhttp://localhost:3000');
  await page.getByLabel(/Attribution window in days/).fill('30');
  await page.getByLabel('Attribution model').selectOption('LAST_CLICK');
  await page.getByLabel(/Repeat clicks of one visitor/).fill('600');
  await page.getByRole('button', { name: 'Save tracking settings' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor({ timeout: 10_000 });
  expect(await okBody(program.api.get('/program'))).toMatchObject({
    allowedOrigins: ['https://shop.example.com', 'http://localhost:3000'],
    attributionWindowDays: 30,
    attributionModel: 'LAST_CLICK',
    clickDedupSeconds: 600,
  });

  await checkPage(page, 'tracking');

  // The Stripe webhook is set on Program settings, the page Tracking links to.
  await page.getByRole('main').getByRole('link', { name: 'Program settings' }).click();
  await page.getByRole('heading', { level: 1, name: 'Program settings' }).waitFor();
  await showing(page.getByLabel('The Stripe webhook URL'), `${system.gatewayUrl}/integrations/stripe/${program.programId}/webhooks`);
  await page.getByLabel(/Stripe webhook signing secret/).fill('whsec_console_test_secret_1234');
  await page.getByRole('button', { name: 'Save the signing secret' }).click();
  await showing(page.getByRole('form', { name: 'Stripe integration' }), 'Signing secret set (ends in 1234).');
  await page.context().close();
});

test('fraud review page: the risk settings saved (an action, the limit, the minimum seconds from click to conversion), HELD commissions shown with their signals, one released with a note and one voided with a reason, and the page passes axe', async () => {
  const page = await newPage();
  const owner = await signIn(page, 'owner');
  await go(page, 'review');
  await showing(page.locator('tbody'), 'No commission is held for review.');
  await page.getByLabel('OVER_AUTO_APPROVAL_LIMIT').selectOption('HOLD');
  await page.getByLabel(/Largest commission approved without review/).fill('5');
  await page.getByLabel(/Fewest seconds from click to conversion/).fill('7');
  await page.getByRole('button', { name: 'Save risk settings' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor({ timeout: 10_000 });
  expect(await okBody(program.api.get('/program'))).toMatchObject({
    maxAutoApprovedCommission: 5,
    minClickToConversionSeconds: 7,
    riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD', SELF_REFERRAL: 'FLAG' },
  });

  // The settings reach the services as program.updated: a sale above the limit is held once they have arrived.
  let held: { id: string; commissions: { id: string; status: string }[] } | undefined;
  await eventually(async () => {
    held = await okBody(program.api.post('/sales', { email: 'customer@example.com', totalEarned: 100 }));
    expect(held?.commissions[0]?.status).toBe('HELD');
  }, 30_000);
  const doubtful: { id: string; commissions: { id: string; status: string }[] } = await okBody(
    program.api.post('/sales', { email: 'customer@example.com', totalEarned: 200 }),
  );
  expect(doubtful.commissions[0]?.status).toBe('HELD');
  await page.reload();
  await go(page, 'review');
  await showing(page.locator('tbody'), 'OVER_AUTO_APPROVAL_LIMIT');
  // The minimum seconds saved shows in its field after the reload (from the program, not the form's memory).
  expect(await page.getByLabel(/Fewest seconds from click to conversion/).inputValue()).toBe('7');
  await checkPage(page, 'review');
  await page.getByLabel(/Note or reason/).fill('checked the order by hand');
  await page.getByRole('button', { name: `Release ${held!.commissions[0]!.id.slice(0, 8)}` }).click();
  await page
    .getByRole('button', { name: `Release ${held!.commissions[0]!.id.slice(0, 8)}` })
    .waitFor({ state: 'detached', timeout: 10_000 });
  const released = await okBody(program.api.get(`/sales?id=${held!.id}`));
  expect(released.commissions[0]).toMatchObject({
    status: 'DUE',
    decisions: [
      { action: 'HOLD' },
      {
        action: 'RELEASE',
        reason: 'checked the order by hand',
        // Decided in the console by a member: the decision names them, not a key.
        by: { kind: 'TEAM_MEMBER', keyPrefix: owner!.email },
      },
    ],
  });
  await page.getByLabel(/Note or reason/).fill('same card as a refunded order');
  await page.getByRole('button', { name: `Void ${doubtful.commissions[0]!.id.slice(0, 8)}` }).click();
  await showing(page.locator('tbody'), 'No commission is held for review.');
  const voided = await okBody(program.api.get(`/sales?id=${doubtful.id}`));
  expect(voided.commissions[0]).toMatchObject({
    status: 'VOID',
    decisions: [
      { action: 'HOLD' },
      { action: 'VOID', reason: 'same card as a refunded order', by: { kind: 'TEAM_MEMBER', keyPrefix: owner!.email } },
    ],
  });
  await page.context().close();
});

test('operator view: create a program, change its settings, create an API key shown once, revoke it, read the audit record', async () => {
  const page = await newPage();
  await signIn(page, 'operator', ADMIN_TOKEN);
  await page.getByRole('heading', { name: 'Programs' }).first().waitFor({ timeout: 10_000 });
  await page.getByLabel('Name', { exact: true }).first().fill('Console program');
  await page.getByRole('button', { name: 'Create program' }).click();
  await page.getByRole('heading', { name: 'Settings of Console program' }).first().waitFor({ timeout: 10_000 });
  await page.getByLabel('Requests').fill('50');
  await page.getByLabel('Per seconds').fill('10');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByRole('status').filter({ hasText: 'Settings saved' }).first().waitFor({ timeout: 10_000 });
  await showing(page.getByRole('row').filter({ hasText: 'Console program' }), '50 per 10 s');

  await page.getByRole('button', { name: 'Create API key' }).click();
  const shown = page.getByRole('status').filter({ hasText: 'shown this once' }).locator('code');
  await showing(shown, /^ak_/);
  const key = (await shown.textContent()) ?? '';
  expect((await fetch(`${system.gatewayUrl}/api/v1/coupons`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  await page.getByRole('button', { name: 'Create publishable key' }).click();
  const publishable = page.getByRole('table', { name: /Publishable keys of this program/ }).locator('code');
  await showing(publishable, /^pk_live_/);
  const programs = await okBody(system.admin().get('/admin/v1/programs'));
  const created = programs.find((each: { name: string }) => each.name === 'Console program');
  expect((await okBody(system.admin().get(`/admin/v1/programs/${created.id}/publishable-keys`)))[0].key).toBe(
    await publishable.first().textContent(),
  );
  await checkPage(page, 'programs');

  await page
    .getByRole('button', { name: /^Revoke ak_/ })
    .first()
    .click();
  await poll(
    page,
    async () => (await fetch(`${system.gatewayUrl}/api/v1/coupons`, { headers: { authorization: `Bearer ${key}` } })).status === 401,
  );
  await counting(page.getByRole('button', { name: /^Revoke ak_/ }), 0);

  await go(page, 'audit');
  await showing(page.locator('tbody'), 'POST /admin/v1/programs/{id}/api-keys');
  await showing(page.locator('tbody'), 'DELETE /admin/v1/api-keys/{id}');
  await checkPage(page, 'audit');
  await page.context().close();
});

test('no page loaded anything from another origin or broke the Content-Security-Policy', () => {
  expect(outside).toEqual([]);
  expect(pageErrors).toEqual([]);
});

async function counting(locator: Locator, expected: number) {
  const deadline = Date.now() + 10_000;
  while ((await locator.count()) !== expected) {
    if (Date.now() > deadline) throw new Error(`expected ${expected} elements, the page has ${await locator.count()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Clicks Refresh (when the page has one) until `done`, at most 20 s. */
async function poll(page: Page, done: () => Promise<boolean>) {
  const deadline = Date.now() + 20_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('the console never showed what was expected');
    const refresh = page.getByRole('button', { name: 'Refresh' });
    if (await refresh.count()) await refresh.click();
    await page.waitForTimeout(300);
  }
}
