import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@affiliate/platform/testing';
import { URI, type TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_TOKEN, okBody, type Api, type System } from '../../system-tests/harness';
import {
  checkPage,
  createMember,
  inviteFromTeamPage,
  newPage,
  runningSystemAndChromium,
  showing,
  signInAsMember,
  signInWithPassword,
  type PageWatch,
} from './chromium-pages';

/**
 * The console's team accounts (issue 32) in a real browser against the whole system: members sign
 * in as themselves, an owner invites the rest by a single-use link, each role sees only the sections
 * it can use, keys and the second factor are managed from their pages, and the operator invites a
 * program's first owner. Each page is checked with axe-core; the screenshots of the new pages go to
 * docs/ for the README.
 */
const DOCS = join(__dirname, '..', '..', 'docs');
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'console-team');

const running = runningSystemAndChromium();
let system: System;
let browser: Browser;
let program: { programId: string; key: string; api: Api };
const watch: PageWatch = { outside: [], pageErrors: [] };

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  ({ system, browser } = running);
  program = await system.createProgram({ name: 'Acme Shop' });
}, 60_000);

const openPage = () => newPage(browser, system.gatewayUrl, watch);
const check = (page: Page, name: string, screenshot = join(SCREENSHOTS, `${name}.png`)) => checkPage(page, name, screenshot);
const go = (page: Page, route: string) => page.goto(`${system.gatewayUrl}/console#/${route}`);
const sections = async (page: Page) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();

/** Opens an invite link in a fresh browser (its own cookies) and accepts it with a password. */
async function acceptInFreshBrowser(inviteUrl: string, password: string, screenshot?: string): Promise<Page> {
  const page = await openPage();
  await page.goto(inviteUrl);
  await page.getByRole('heading', { name: "Join the program's team" }).waitFor();
  // The page keeps the token in memory: a refused or abandoned accept leaves no live invite in the address bar.
  expect(page.url()).not.toContain('token=');
  if (screenshot) await check(page, 'accept-invite', screenshot);
  await page.getByLabel('New password').fill(password);
  await page.getByRole('button', { name: 'Accept the invite' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor({ timeout: 15_000 });
  return page;
}

test('the sign-in page refuses a wrong password with the API’s message, keeps nothing in the tab, and passes axe', async () => {
  const member = await createMember(system, program.programId, 'ANALYST');
  const page = await openPage();
  await page.goto(`${system.gatewayUrl}/console`);
  await page.getByRole('heading', { name: 'Affiliate console' }).waitFor();
  await check(page, 'sign-in', join(DOCS, 'console-sign-in.png'));
  await page.getByLabel('Email', { exact: true }).fill(member.email);
  await page.getByLabel('Password', { exact: true }).fill('this is not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await showing(page.getByRole('alert'), 'Wrong email or password');
  expect(await page.getByRole('navigation', { name: 'Sections' }).count()).toBe(0);
  expect(await page.evaluate('sessionStorage.length')).toBe(0);
  await page.context().close();
});

test('an owner invites a FINANCE member and an ANALYST from the Team page; each accepts the link in a fresh browser and lands signed in with only their sections', async () => {
  const owner = await openPage();
  await signInAsMember(owner, system, program.programId, 'OWNER');
  const ownerSections = await sections(owner);
  expect(ownerSections).toEqual(expect.arrayContaining(['Team', 'API keys', 'Your account', 'Webhooks']));
  await go(owner, 'team');
  await owner.getByRole('heading', { name: 'Team', exact: true }).waitFor();

  const financeEmail = 'finance.member@example.com';
  const financeLink = await inviteFromTeamPage(owner, financeEmail, 'FINANCE');
  await showing(owner.getByRole('table', { name: 'Invites not accepted yet' }), financeEmail);
  await check(owner, 'team', join(DOCS, 'console-team.png'));
  const analystEmail = 'analyst.member@example.com';
  const analystLink = await inviteFromTeamPage(owner, analystEmail, 'ANALYST');

  // The API's own message beside the password field, then the member is in.
  const finance = await openPage();
  await finance.goto(financeLink);
  await finance.getByLabel('New password').fill('too short');
  await finance.getByRole('button', { name: 'Accept the invite' }).click();
  await showing(finance.locator('#accept-password-error'), '12 characters');
  expect(await finance.getByLabel('New password').getAttribute('aria-describedby')).toBe('accept-password-error');
  await finance.getByLabel('New password').fill('a finance password of some length');
  await finance.getByRole('button', { name: 'Accept the invite' }).click();
  await showing(finance.locator('header .brand'), `${financeEmail} (FINANCE)`);
  // The invite's token left the address bar.
  expect(finance.url()).not.toContain('token=');
  const financeSections = await sections(finance);
  expect(financeSections).toEqual(expect.arrayContaining(['Team', 'Your account', 'Fraud review']));
  expect(financeSections).not.toContain('API keys');

  const analyst = await acceptInFreshBrowser(analystLink, 'an analyst password of some length', join(DOCS, 'console-accept-invite.png'));
  await showing(analyst.locator('header .brand'), `${analystEmail} (ANALYST)`);
  const analystSections = await sections(analyst);
  expect(analystSections).toEqual(expect.arrayContaining(['Team', 'Your account']));
  expect(analystSections).not.toContain('API keys');
  // The Team page reads the same for every role, but only an owner sees its buttons.
  await go(analyst, 'team');
  await showing(analyst.getByRole('table', { name: 'Members' }), financeEmail);
  expect(await analyst.getByRole('button', { name: 'Invite', exact: true }).count()).toBe(0);
  expect(await analyst.getByRole('button', { name: /^Remove / }).count()).toBe(0);

  // The link was single-use: opened again, the API says so.
  const again = await openPage();
  await again.goto(analystLink);
  await again.getByLabel('New password').fill('another password of some length');
  await again.getByRole('button', { name: 'Accept the invite' }).click();
  await again.getByRole('alert').first().waitFor();
  expect(await again.getByRole('navigation', { name: 'Sections' }).count()).toBe(0);

  await owner.reload();
  await showing(owner.getByRole('table', { name: 'Members' }), analystEmail);
  for (const each of [owner, finance, analyst, again]) await each.context().close();
});

test('an owner changes a member’s role and removes them; the last owner’s own demotion is refused with the API’s message', async () => {
  const owner = await openPage();
  const me = await signInAsMember(owner, system, program.programId, 'OWNER');
  const other = await createMember(system, program.programId, 'ANALYST');
  await go(owner, 'team');
  await owner.getByLabel(`New role of ${other.email}`).selectOption('ADMIN');
  await owner.getByRole('button', { name: `Change role of ${other.email}` }).click();
  await showing(owner.getByRole('row').filter({ hasText: other.email }), 'ADMIN');
  const members = async () => (await okBody(system.admin().get(`/admin/v1/programs/${program.programId}/members`))).members;
  expect((await members()).find((member: { email: string }) => member.email === other.email)).toMatchObject({ role: 'ADMIN' });

  await owner.getByRole('button', { name: `Remove ${other.email}` }).click();
  await owner.getByRole('row').filter({ hasText: other.email }).waitFor({ state: 'detached' });
  expect((await members()).map((member: { email: string }) => member.email)).not.toContain(other.email);

  // Other owners of the program (from the other tests) would leave this one free to step down: remove them first.
  for (const member of await members())
    if (member.email !== me.email && member.role === 'OWNER') {
      await owner.reload();
      await owner.getByRole('button', { name: `Remove ${member.email}` }).click();
      await owner.getByRole('row').filter({ hasText: member.email }).waitFor({ state: 'detached' });
    }
  await owner.getByLabel(`New role of ${me.email}`).selectOption('ANALYST');
  await owner.getByRole('button', { name: `Change role of ${me.email}` }).click();
  await showing(owner.getByRole('alert'), /owner/i);
  expect((await members()).find((member: { email: string }) => member.email === me.email)).toMatchObject({ role: 'OWNER' });
  await owner.context().close();
});

test('sign-out ends the session: the old cookie is refused by the API, and a reload shows the sign-in page', async () => {
  const page = await openPage();
  await signInAsMember(page, system, program.programId, 'ANALYST');
  const cookie = (await page.context().cookies()).find((each) => each.name === '__Host-affiliate_console_session');
  expect(cookie).toMatchObject({ name: '__Host-affiliate_console_session', httpOnly: true, sameSite: 'Strict' });
  const sessionWith = (value: string) =>
    fetch(`${system.gatewayUrl}/api/v1/team/session`, { headers: { cookie: `__Host-affiliate_console_session=${value}` } });
  expect((await sessionWith(cookie!.value)).status).toBe(200);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect((await sessionWith(cookie!.value)).status).toBe(401);
  await page.reload();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await page.getByRole('navigation', { name: 'Sections' }).count()).toBe(0);
  await page.context().close();
});

test('a session that ends elsewhere takes the page back to the sign-in page, which says why', async () => {
  const page = await openPage();
  await signInAsMember(page, system, program.programId, 'ANALYST');
  const cookie = (await page.context().cookies()).find((each) => each.name === '__Host-affiliate_console_session');
  const header = `__Host-affiliate_console_session=${cookie!.value}`;
  const session = (await (await fetch(`${system.gatewayUrl}/api/v1/team/session`, { headers: { cookie: header } })).json()) as {
    csrfToken: string;
  };
  const signedOut = await fetch(`${system.gatewayUrl}/api/v1/team/session`, {
    method: 'DELETE',
    headers: { cookie: header, 'x-csrf-token': session.csrfToken, origin: system.gatewayUrl },
  });
  expect(signedOut.status).toBe(200);
  await go(page, 'team');
  await showing(page.getByRole('status'), 'Your session ended');
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await page.getByRole('navigation', { name: 'Sections' }).count()).toBe(0);
  await page.context().close();
});

test('API keys page: an owner creates a read-only key shown once, it reads but cannot write, and revoking it stops it', async () => {
  const page = await openPage();
  await signInAsMember(page, system, program.programId, 'OWNER');
  await go(page, 'api-keys');
  await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
  await page.getByLabel('write: every change').uncheck();
  await page.getByRole('button', { name: 'Create API key' }).click();
  const shown = page.getByRole('status').filter({ hasText: 'shown this once' }).locator('code');
  await showing(shown, /^ak_/);
  const key = (await shown.textContent()) ?? '';
  const withKey = (method: string, body?: unknown) =>
    fetch(`${system.gatewayUrl}/api/v1/coupons`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  expect((await withKey('GET')).status).toBe(200);
  expect((await withKey('POST', { name: 'Nope', percentOff: 5 })).status).toBe(403);
  const keys = page.getByRole('table', { name: 'Secret API keys of this program' });
  await showing(keys, 'read');
  await check(page, 'api-keys', join(DOCS, 'console-api-keys.png'));

  // The key's row is the one whose prefix the key starts with.
  const labels = await keys.getByRole('button', { name: /^Revoke / }).allTextContents();
  const label = labels.find((each) => key.startsWith(each.replace(/^Revoke /, '')));
  expect(label).toBeDefined();
  await keys.getByRole('button', { name: label, exact: true }).click();
  await keys.getByRole('button', { name: label, exact: true }).waitFor({ state: 'detached' });
  await eventually(async () => expect((await withKey('GET')).status).toBe(401), 20_000);
  await page.context().close();
});

test('Your account: the second factor is set up from the secret shown, asked for at the next sign-in, and turned off with a code', async () => {
  const page = await openPage();
  const member = await signInAsMember(page, system, program.programId, 'FINANCE');
  await go(page, 'account');
  await showing(page.locator('dl'), member.email);
  await page.getByRole('button', { name: 'Set up the second factor' }).click();
  const url = page.locator('code').filter({ hasText: 'otpauth://' });
  await showing(url, /^otpauth:\/\/totp\//);
  const app = URI.parse((await url.textContent()) ?? '') as TOTP;
  expect(await page.locator('code').first().textContent()).toBe(app.secret.base32);
  await check(page, 'account', join(DOCS, 'console-account.png'));
  await page.getByLabel('Code of the authenticator app').fill('12');
  await page.getByRole('button', { name: 'Turn the second factor on' }).click();
  await showing(page.locator('#totp-code-error'), '6 digits');
  // A code works once (RFC 6238 §5.2): confirming, signing in and turning off each take a later step's
  // code, the codes of the step before now, now's and the next, taken early in a step so that the
  // first is still within the server's one-step window when it arrives on a slow machine.
  await eventually(() => expect(Date.now() % 30_000).toBeLessThan(10_000), 25_000);
  const now = Date.now();
  const [previous, current, next] = [-30_000, 0, 30_000].map((offset) => app.generate({ timestamp: now + offset }));
  await page.getByLabel('Code of the authenticator app').fill(previous as string);
  await page.getByRole('button', { name: 'Turn the second factor on' }).click();
  await showing(page.getByRole('status'), 'On: signing in asks for a code');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Email', { exact: true }).fill(member.email);
  await page.getByLabel('Password', { exact: true }).fill(member.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Authenticator code').fill(current as string);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor({ timeout: 15_000 });

  await go(page, 'account');
  await page.getByLabel('Code of the authenticator app').fill(next as string);
  await page.getByRole('button', { name: 'Turn the second factor off' }).click();
  await page.getByRole('button', { name: 'Set up the second factor' }).waitFor();
  // Off again: the password alone signs in.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await signInWithPassword(page, system.gatewayUrl, member);
  expect(await page.getByLabel('Authenticator code').count()).toBe(0);
  await page.context().close();
});

test('operator view: a new program’s members are listed and its first owner is invited; the link signs them in as its OWNER', async () => {
  const page = await openPage();
  await page.goto(`${system.gatewayUrl}/console`);
  await page.getByLabel('Operator').check();
  await page.getByLabel('Admin token', { exact: true }).fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Name', { exact: true }).first().fill('Owned program');
  await page.getByRole('button', { name: 'Create program' }).click();
  await page.getByRole('heading', { name: 'Settings of Owned program' }).waitFor();
  await showing(page.getByRole('table', { name: 'Members of this program' }), 'No member yet');
  await page.getByLabel('Email of the member to invite').fill('first.owner@example.com');
  await page.getByRole('button', { name: 'Invite an owner' }).click();
  const link = page.getByRole('status').filter({ hasText: 'Invite link for first.owner@example.com (OWNER)' }).locator('code');
  await showing(link, '/console/#/accept-invite?token=');
  await showing(page.getByRole('table', { name: 'Invites of this program not accepted yet' }), 'first.owner@example.com');
  await check(page, 'operator-members', join(DOCS, 'console-operator-members.png'));

  const owner = await acceptInFreshBrowser((await link.textContent()) ?? '', 'the first owner password');
  await showing(owner.locator('header .brand'), 'Owned program · first.owner@example.com (OWNER)');
  expect(await sections(owner)).toContain('API keys');
  await page.reload();
  await page.getByRole('button', { name: 'Settings of Owned program' }).click();
  await showing(page.getByRole('table', { name: 'Members of this program' }), 'first.owner@example.com');
  await owner.context().close();
  await page.context().close();
});

test('no page loaded anything from another origin or broke the Content-Security-Policy', () => {
  expect(watch.outside).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
});
