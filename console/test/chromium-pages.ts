import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { System } from '../../system-tests/harness';

/**
 * What the headless-Chromium tests of the console and of the affiliate portal share: Debian's
 * chromium through playwright-core, pages that may load nothing but the gateway's origin, axe-core on
 * each page, and waiting for what a person would see.
 */
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

/**
 * The whole system and a headless Chromium for a test file: started before its tests and stopped after
 * them; the tests read `running.system` and `running.browser`.
 */
export function runningSystemAndChromium(): { system: System; browser: Browser } {
  const running = {} as { system: System; browser: Browser };
  beforeAll(async () => {
    running.system = await System.start();
    running.browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await running.browser?.close();
    await running.system?.stop();
  });
  return running;
}

/** Every request that left the gateway's origin (refused), and every script error or CSP refusal the pages reported. */
export type PageWatch = { outside: string[]; pageErrors: string[] };

/** A page in a fresh context (its own cookies) that may reach the gateway only. */
export async function newPage(browser: Browser, gatewayUrl: string, watch: PageWatch): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(gatewayUrl)) return route.continue();
    watch.outside.push(route.request().url());
    return route.abort();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()))
      watch.pageErrors.push(message.text());
  });
  page.on('pageerror', (error) => watch.pageErrors.push(error.message));
  return page;
}

/** axe-core on the page as it stands (no serious or critical violation), then a screenshot. */
export async function checkPage(page: Page, name: string, screenshot: string): Promise<void> {
  await page.evaluate(AXE);
  // Evaluated in the page, where axe-core was just loaded (the page's own scripts never load it).
  const violations = (await page.evaluate(
    `axe.run(document).then((result) => result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.map((node) => node.target.join(' ')).slice(0, 3) })))`,
  )) as { id: string; impact: string; nodes: string[] }[];
  expect({
    page: name,
    violations: violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical'),
  }).toEqual({ page: name, violations: [] });
  await page.screenshot({ path: screenshot, fullPage: true });
}

/** Waits until the locator's text matches (a pattern) or contains (a string); fails with the text it last saw. */
export async function showing(locator: Locator, expected: RegExp | string, timeoutMs = 10_000): Promise<void> {
  let seen: string | null = null;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    seen = (await locator.count()) > 0 ? await locator.first().textContent() : null;
    if (seen !== null && (typeof expected === 'string' ? seen.includes(expected) : expected.test(seen))) return;
    if (Date.now() > deadline) throw new Error(`expected ${String(expected)}, the page shows ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A console team member as a test uses one: who, and the password they chose. */
export type TestMember = { email: string; password: string; role: 'OWNER' | 'ADMIN' | 'FINANCE' | 'ANALYST' };

/** A new member of the program, as the operator makes one (System.memberSession: the admin API's invite, accepted with a password); no browser is signed in by it. */
export async function createMember(system: System, programId: string, role: TestMember['role']): Promise<TestMember> {
  const { email, password } = await system.memberSession(programId, role);
  return { email, password, role };
}

/** Signs the page in to the console through its sign-in form, as a team member, and waits for the navigation. */
export async function signInWithPassword(page: Page, gatewayUrl: string, member: { email: string; password: string }): Promise<void> {
  await page.goto(`${gatewayUrl}/console`);
  await page.getByLabel('Team member').check();
  await page.getByLabel('Email', { exact: true }).fill(member.email);
  await page.getByLabel('Password', { exact: true }).fill(member.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor({ timeout: 15_000 });
}

/** A new member of the program with this role (the operator's invite), signed in to the console on this page through the UI. */
export async function signInAsMember(page: Page, system: System, programId: string, role: TestMember['role']): Promise<TestMember> {
  const member = await createMember(system, programId, role);
  await signInWithPassword(page, system.gatewayUrl, member);
  return member;
}

/** Invites a member from the Team page (an OWNER's, open on it) and answers the single-use link the page shows once. */
export async function inviteFromTeamPage(page: Page, email: string, role: TestMember['role']): Promise<string> {
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Role', { exact: true }).selectOption(role);
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  const link = page
    .getByRole('status')
    .filter({ hasText: `Invite link for ${email}` })
    .locator('code');
  await showing(link, '/console/#/accept-invite?token=');
  return (await link.textContent()) ?? '';
}
