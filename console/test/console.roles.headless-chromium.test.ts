import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@affiliate/platform/testing';
import type { Locator, Page } from 'playwright-core';
import { TEAM_SESSION_COOKIE } from '../../gateway/src/team/team-sessions';
import { okBody, type Api } from '../../system-tests/harness';
import {
  checkPage,
  inviteFromTeamPage,
  newPage,
  runningSystemAndChromium,
  showing,
  signInAsMember,
  type PageWatch,
} from './chromium-pages';

/**
 * Issue 32's "Done when", one journey per role, in a real browser against the whole system: an OWNER
 * invites a FINANCE member and an ANALYST from the Team page; FINANCE runs a payout and marks it paid
 * but cannot delete a plan (no button, and 403 from the API for the same call with its session); the
 * ANALYST can change nothing, through the UI or the API; and every one of those actions is in the
 * audit record under the member who made it, on the Audit record page and through the API. The tests
 * run in order: each journey goes on with the members and pages the one before it left.
 */
const DOCS = join(__dirname, '..', '..', 'docs');

const running = runningSystemAndChromium();
const watch: PageWatch = { outside: [], pageErrors: [] };

afterEach(() => {
  expect(watch).toEqual({ outside: [], pageErrors: [] });
});

/** A member's console session as the browser holds it: the cookie, and the CSRF token the gateway gave it. */
type Session = { cookie: string; csrfToken: string; memberId: string; email: string };

/** Who the journeys are: the program, and each member's page and session once they are signed in. */
const journey = {} as {
  program: { programId: string; key: string; api: Api };
  adaId: string;
  couponId: string;
  owner: { page: Page; session: Session };
  finance: { page: Page; session: Session };
  analyst: { page: Page; session: Session };
};

const gateway = () => running.system.gatewayUrl;
const openPage = () => newPage(running.browser, gateway(), watch);
const go = (page: Page, route: string) => page.goto(`${gateway()}/console#/${route}`);
const sections = (page: Page) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();
const rowOf = (scope: Page | Locator, text: string | RegExp): Locator => scope.getByRole('row').filter({ hasText: text });

/** The session of the member signed in on this page, read with its own cookie (GET /api/v1/team/session). */
async function sessionOf(page: Page): Promise<Session> {
  const cookie = (await page.context().cookies()).find((each) => each.name === TEAM_SESSION_COOKIE);
  const header = `${TEAM_SESSION_COOKIE}=${cookie?.value ?? ''}`;
  const answer = await fetch(`${gateway()}/api/v1/team/session`, { headers: { cookie: header } });
  expect(answer.status).toBe(200);
  const session = (await answer.json()) as { csrfToken: string; member: { id: string; email: string } };
  return { cookie: header, csrfToken: session.csrfToken, memberId: session.member.id, email: session.member.email };
}

/** A write made with a member's session from outside the browser, as the console makes it: cookie, CSRF token and the console's Origin. */
async function asMember(
  session: Session,
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: { code?: string } }> {
  const answer = await fetch(`${gateway()}/api/v1${path}`, {
    method,
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, origin: gateway(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: answer.status, body: (await answer.json()) as { code?: string } };
}

/** Opens an invite link in a fresh browser context (its own cookies), accepts it with a password, and answers the signed-in page. */
async function acceptInFreshBrowser(inviteUrl: string, email: string, role: string): Promise<{ page: Page; session: Session }> {
  const page = await openPage();
  await page.goto(inviteUrl);
  await page.getByLabel('New password').fill(`the ${role.toLowerCase()} password of some length`);
  await page.getByRole('button', { name: 'Accept the invite' }).click();
  await showing(page.locator('header .brand'), `${email} (${role})`);
  return { page, session: await sessionOf(page) };
}

/** What a button that changes something is called on the program pages (read-only buttons: Manage, Find, Show, Next page, Export...). */
const CHANGES =
  /^(Create|Edit|Save|Delete|Approve|Reject|Run|Mark|Make|Deactivate|Activate|Generate|Issue|Add|Assign|Invite|Remove|Revoke|Rotate|Reveal|Send|Test|Retry|Resend|Release|Void|Recover|Confirm)\b/;

/** The enabled buttons of the page's main part that would change something, by their accessible name. */
async function changeButtons(page: Page): Promise<string[]> {
  const names = await page
    .locator('main button:enabled')
    .evaluateAll((buttons) => buttons.map((button) => (button.getAttribute('aria-label') ?? button.textContent ?? '').trim()));
  return names.filter((name) => CHANGES.test(name));
}

beforeAll(async () => {
  mkdirSync(DOCS, { recursive: true });
  // A default plan with no hold: Ada's commission is DUE at once, ready for a payout run.
  const program = await running.system.createProgram({ name: 'Acme Shop', destinationUrls: [{ url: 'https://shop.example.com/' }] });
  const { api } = program;
  await okBody(
    api.post('/commission-plans', {
      name: 'Due at once',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  await okBody(api.post('/commission-plans', { name: 'Spare plan', commissionType: 'PERCENTAGE', rate: 5, recurring: 'ONCE' }));
  const ada = await okBody(
    api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', affiliateLink: 'ada' }),
  );
  await okBody(
    api.put('/affiliates', {
      affiliateId: ada.id,
      payoutDetails: { method: 'BANK_TRANSFER', accountHolder: 'Ada Byron', iban: 'GB82 WEST 1234 5698 7654 32' },
    }),
  );
  const referral = await okBody(api.post('/referrals', { link: 'ada', email: 'customer-of-ada@example.com' }));
  await okBody(api.post('/sales', { referralId: referral.id, totalEarned: 100 }));
  const coupon = await okBody(api.post('/coupons', { name: 'Spring sale', percentOff: 10 }));
  await okBody(api.post('/webhook-endpoints', { url: 'https://hooks.example.com/affiliate', eventTypes: ['sale.created'] }));
  Object.assign(journey, { program, adaId: ada.id, couponId: coupon.id });
}, 60_000);

afterAll(async () => {
  for (const member of [journey.owner, journey.finance, journey.analyst]) await member?.page.context().close();
});

test('OWNER: signs in, invites a FINANCE member and an ANALYST from the Team page; each accepts their link in a fresh browser', async () => {
  const page = await openPage();
  await signInAsMember(page, running.system, journey.program.programId, 'OWNER');
  journey.owner = { page, session: await sessionOf(page) };
  await go(page, 'team');
  await page.getByRole('heading', { name: 'Team', exact: true }).waitFor();
  const financeLink = await inviteFromTeamPage(page, 'fiona.finance@example.com', 'FINANCE');
  const analystLink = await inviteFromTeamPage(page, 'anna.analyst@example.com', 'ANALYST');

  journey.finance = await acceptInFreshBrowser(financeLink, 'fiona.finance@example.com', 'FINANCE');
  journey.analyst = await acceptInFreshBrowser(analystLink, 'anna.analyst@example.com', 'ANALYST');
  await page.reload();
  const members = page.getByRole('table', { name: 'Members' });
  await showing(rowOf(members, 'fiona.finance@example.com'), 'FINANCE');
  await showing(rowOf(members, 'anna.analyst@example.com'), 'ANALYST');
  // The buttons the other roles must not see are there for an owner (so their absence later means something).
  await go(page, 'plans');
  await showing(rowOf(page, 'Spare plan'), '5%');
  expect(await changeButtons(page)).toEqual(
    expect.arrayContaining(['Edit Spare plan', 'Delete Spare plan', 'Make Spare plan the default']),
  );
});

test('FINANCE: runs a payout and marks it paid on the Payouts page; no delete button on the plans, and the same DELETE with its session answers 403 and keeps the plan', async () => {
  const { page, session } = journey.finance;
  const { api } = journey.program;
  await go(page, 'payouts');
  await page.getByRole('button', { name: 'Run payout' }).click();
  await showing(page.getByRole('status'), '1 draft payout created: US$20.00');
  await showing(rowOf(page, 'ada@example.com'), 'US$20.00');
  await page.getByLabel('Transfer reference for Ada Byron (optional)').fill('BANK-TX-FINANCE');
  await page.getByRole('button', { name: 'Mark Ada Byron paid' }).click();
  await eventually(async () => expect(await rowOf(page, 'ada@example.com').count()).toBe(0));
  expect(await okBody(api.get(`/payouts?affiliateId=${journey.adaId}`))).toEqual([
    expect.objectContaining({ status: 'PAID', externalReference: 'BANK-TX-FINANCE' }),
  ]);

  await go(page, 'plans');
  await showing(rowOf(page, 'Spare plan'), '5%');
  expect(await page.getByRole('button', { name: /^Delete / }).count()).toBe(0);
  const [spare] = (await okBody(api.get('/commission-plans'))).filter((plan: { name: string }) => plan.name === 'Spare plan');
  const refused = await asMember(session, 'DELETE', '/commission-plans', { commissionPlanId: spare.id });
  expect(refused).toEqual({ status: 403, body: expect.objectContaining({ code: 'role_forbidden' }) });
  expect(await okBody(api.get(`/commission-plans?id=${spare.id}`))).toEqual(expect.objectContaining({ id: spare.id, name: 'Spare plan' }));
});

test('ANALYST: no page it opens offers a change and Payouts is not in its navigation; one write per resource family with its session answers 403 and changes nothing', async () => {
  const { page, session } = journey.analyst;
  const { api } = journey.program;
  const nav = await sections(page);
  expect(nav).toEqual(expect.arrayContaining(['Approve and edit affiliates', 'Commission plans', 'Coupons and codes', 'Webhooks']));
  expect(nav).not.toContain('Payouts');

  await go(page, 'manage-affiliates');
  await showing(rowOf(page, 'ada@example.com'), 'Ada');
  expect(await changeButtons(page)).toEqual([]);
  await go(page, 'plans');
  await showing(rowOf(page, 'Spare plan'), '5%');
  expect(await changeButtons(page)).toEqual([]);
  await go(page, 'coupons');
  await page.getByRole('button', { name: 'Manage Spring sale' }).click();
  await page
    .getByRole('heading', { name: /Spring sale/ })
    .first()
    .waitFor();
  expect(await changeButtons(page)).toEqual([]);
  await go(page, 'webhooks');
  await page.getByRole('button', { name: 'Manage https://hooks.example.com/affiliate' }).click();
  await page
    .getByRole('heading', { name: /hooks\.example\.com/ })
    .first()
    .waitFor();
  expect(await changeButtons(page)).toEqual([]);
  await go(page, 'settings');
  const name = page.getByLabel('Name', { exact: true });
  await eventually(async () => expect(await name.inputValue()).toBe('Acme Shop'));
  expect(await name.isDisabled()).toBe(true);
  expect(await page.getByLabel('New affiliates wait for approval').isDisabled()).toBe(true);
  expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
  expect(await changeButtons(page)).toEqual([]);

  // What each refused write would have changed, read with the program's key before and after.
  const readBack = async () => ({
    coupons: await okBody(api.get('/coupons')),
    ada: await okBody(api.get(`/affiliates?id=${journey.adaId}`)),
    plans: await okBody(api.get('/commission-plans')),
    program: await okBody(api.get('/program')),
    endpoints: await okBody(api.get('/webhook-endpoints')),
    payouts: await okBody(api.get('/payouts')),
  });
  const before = await readBack();
  const writes: [string, string, unknown][] = [
    ['POST', '/coupons', { name: 'Analyst coupon', percentOff: 50 }],
    ['PUT', '/affiliates', { affiliateId: journey.adaId, firstName: 'Changed' }],
    ['POST', '/commission-plans', { name: 'Analyst plan', commissionType: 'PERCENTAGE', rate: 90, recurring: 'ONCE' }],
    ['PUT', '/program', { name: 'Renamed by the analyst' }],
    ['POST', '/webhook-endpoints', { url: 'https://analyst.example.com/hooks', eventTypes: ['sale.created'] }],
    ['POST', '/payouts', {}],
  ];
  for (const [method, path, body] of writes)
    expect({ write: `${method} ${path}`, ...(await asMember(session, method, path, body)) }).toEqual({
      write: `${method} ${path}`,
      status: 403,
      body: expect.objectContaining({ code: 'role_forbidden' }),
    });
  expect(await readBack()).toEqual(before);
});

test('every action of the journeys is in the audit record under the member who made it: on the Audit record page as the OWNER, and through the API', async () => {
  const { owner, finance, analyst } = journey;
  const expected: { who: Session; action: string; operation: string; status: number; times: number }[] = [
    { who: owner.session, action: 'team.member_invited', operation: 'POST /api/v1/team/members', status: 200, times: 2 },
    // One click on Run payout calls until a call makes no draft: the call that made Ada's, then the empty one.
    { who: finance.session, action: 'member.change', operation: 'POST /api/v1/payouts', status: 200, times: 2 },
    { who: finance.session, action: 'payout.status_changed', operation: 'PUT /api/v1/payouts', status: 200, times: 1 },
    { who: finance.session, action: 'member.change', operation: 'DELETE /api/v1/commission-plans', status: 403, times: 1 },
    ...['POST /api/v1/coupons', 'PUT /api/v1/affiliates', 'POST /api/v1/commission-plans', 'PUT /api/v1/program'].map((operation) => ({
      who: analyst.session,
      action: 'member.change',
      operation,
      status: 403,
      times: 1,
    })),
    // Creating an endpoint answers its signing secret: the attempt is recorded as the secret's reveal, refused.
    { who: analyst.session, action: 'webhook_secret.revealed', operation: 'POST /api/v1/webhook-endpoints', status: 403, times: 1 },
    { who: analyst.session, action: 'member.change', operation: 'POST /api/v1/payouts', status: 403, times: 1 },
  ];

  // Through the API: each record names the member (id and email), never a key.
  const records = await eventually(async () => {
    const all = (await okBody(journey.program.api.get('/audit-records?limit=100'))) as {
      actor: { memberId?: string; email?: string; apiKeyId?: string };
      action: string;
      operation: string;
      status: number;
    }[];
    for (const each of expected) {
      const found = all.filter((record) => record.actor.memberId === each.who.memberId && record.operation === each.operation);
      expect({ ...each, found: found.map(({ action, status }) => ({ action, status })) }).toEqual({
        ...each,
        found: Array(each.times).fill({ action: each.action, status: each.status }),
      });
    }
    return all;
  }, 20_000);
  for (const record of records.filter((each) => each.actor.memberId))
    expect(record.actor).toEqual({ memberId: record.actor.memberId, email: expect.stringMatching(/@example\.com$/) });

  // On the page: the member's email beside each action.
  const { page } = owner;
  await go(page, 'audit-records');
  await page.getByRole('heading', { name: 'Audit record' }).waitFor();
  const table = page.getByRole('table');
  for (const each of expected) {
    const row = rowOf(table, `${each.who.email} (${each.who.memberId})${each.action}${each.operation}${each.status}`);
    await eventually(async () =>
      expect({ operation: each.operation, rows: await row.count() }).toEqual({ operation: each.operation, rows: each.times }),
    );
  }
  await checkPage(page, 'audit-records', join(DOCS, 'console-audit-records.png'));
});
