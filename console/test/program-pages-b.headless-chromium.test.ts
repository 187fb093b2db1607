import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@affiliate/platform/testing';
import { parse } from 'csv-parse/sync';
import type { Locator, Page } from 'playwright-core';
import { okBody, type Api } from '../../system-tests/harness';
import { checkPage, runningSystemAndChromium, newPage as openPage, showing, signInAsMember, type PageWatch } from './chromium-pages';

/**
 * The pages a program team runs its money with (issue 32): payouts (run, drafts, CSV export, paid or
 * failed), reports per affiliate with their CSV, and the program's settings with the API's messages
 * beside the fields; in a real browser against the whole system, each page checked with axe-core and
 * photographed into docs/.
 */
const DOCS = join(__dirname, '..', '..', 'docs');

const running = runningSystemAndChromium();
const watch: PageWatch = { outside: [], pageErrors: [] };

beforeAll(() => mkdirSync(DOCS, { recursive: true }));

afterEach(() => {
  expect(watch).toEqual({ outside: [], pageErrors: [] });
});

type Program = { programId: string; key: string; api: Api };

/**
 * A program whose default plan pays 20 % with no hold (every commission DUE at once), Ada with a
 * sale of 100 and a bank account, Grace with a sale of 50 and PayPal.
 */
async function programWithDueCommissions(): Promise<{ program: Program; ada: { id: string }; grace: { id: string } }> {
  const program = await running.system.createProgram({ name: 'Acme Shop', destinationUrls: [{ url: 'https://shop.example.com/' }] });
  const { api } = program;
  const plan = { name: 'Due at once', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 0, isDefault: true };
  await okBody(api.post('/commission-plans', plan));
  const affiliates: { id: string }[] = [];
  for (const { firstName, lastName, total, payoutDetails } of [
    {
      firstName: 'Ada',
      lastName: 'Byron',
      total: 100,
      payoutDetails: { method: 'BANK_TRANSFER', accountHolder: 'Ada Byron', iban: 'GB82 WEST 1234 5698 7654 32' },
    },
    { firstName: 'Grace', lastName: 'Hopper', total: 50, payoutDetails: { method: 'PAYPAL', email: 'grace.paypal@example.com' } },
  ]) {
    const link = firstName.toLowerCase();
    const affiliate = await okBody(api.post('/affiliates', { firstName, lastName, email: `${link}@example.com`, affiliateLink: link }));
    await okBody(api.put('/affiliates', { affiliateId: affiliate.id, payoutDetails }));
    const referral = await okBody(api.post('/referrals', { link, email: `customer-of-${link}@example.com` }));
    await okBody(api.post('/sales', { referralId: referral.id, totalEarned: total }));
    affiliates.push(affiliate);
  }
  for (let index = 0; index < 3; index += 1) await okBody(api.post('/clicks', { link: 'ada' }));
  return { program, ada: affiliates[0] as { id: string }, grace: affiliates[1] as { id: string } };
}

/** The sign-in step of every test, in one call: a team member's session (an OWNER's). */
async function signInAsProgramTeam(program: Program): Promise<Page> {
  const page = await openPage(running.browser, running.system.gatewayUrl, watch);
  await signInAsMember(page, running.system, program.programId, 'OWNER');
  await showing(page.getByRole('navigation', { name: 'Sections' }), 'Payouts');
  return page;
}

const go = (page: Page, route: string) => page.goto(`${running.system.gatewayUrl}/console#/${route}`);

/** Clicks what starts a download and answers the file's text, as the browser saved it. */
async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  const path = await download.path();
  return { name: download.suggestedFilename(), text: readFileSync(path, 'utf8') };
}

const rowOf = (page: Page, text: string): Locator => page.getByRole('row').filter({ hasText: text });

const check = (page: Page, name: string) => checkPage(page, name, join(DOCS, `console-${name}.png`));

test('payouts: a run gathers the due commissions into drafts, a draft exports as CSV, one is marked paid and one failed', async () => {
  const { program, ada, grace } = await programWithDueCommissions();
  const page = await signInAsProgramTeam(program);
  await go(page, 'payouts');
  await showing(page.getByRole('table'), 'No draft');

  await page.getByRole('button', { name: 'Run payout' }).click();
  await showing(page.getByRole('status'), '2 draft payouts created: US$30.00');
  await showing(rowOf(page, 'ada@example.com'), 'US$20.00');
  await showing(rowOf(page, 'ada@example.com'), 'bank transfer: IBAN ····5432');
  await showing(rowOf(page, 'grace@example.com'), 'US$10.00');
  await check(page, 'payouts');

  const csv = await downloaded(page, () => page.getByRole('button', { name: 'Export CSV for Ada Byron' }).click());
  const [adaPayout] = await okBody(program.api.get(`/payouts?affiliateId=${ada.id}`));
  expect(csv.name).toBe(`payout-${adaPayout.id}.csv`);
  expect(parse(csv.text, { columns: true })).toEqual([
    expect.objectContaining({
      payout_id: adaPayout.id,
      affiliate_id: ada.id,
      email: 'ada@example.com',
      payout_method: 'BANK_TRANSFER',
      iban: 'GB82WEST12345698765432',
      amount: '20.00',
      currency: 'USD',
      status: 'PENDING',
    }),
  ]);

  await page.getByLabel('Transfer reference for Ada Byron (optional)').fill('BANK-TX-1');
  await page.getByRole('button', { name: 'Mark Ada Byron paid' }).click();
  await eventually(async () => expect(await rowOf(page, 'ada@example.com').count()).toBe(0));
  await page.getByRole('button', { name: 'Mark Grace Hopper failed' }).click();
  await showing(page.getByRole('table'), 'No draft');

  expect(await okBody(program.api.get(`/payouts?affiliateId=${ada.id}`))).toEqual([
    expect.objectContaining({ status: 'PAID', externalReference: 'BANK-TX-1' }),
  ]);
  expect(await okBody(program.api.get(`/payouts?affiliateId=${grace.id}`))).toEqual([expect.objectContaining({ status: 'FAILED' })]);
  await page.getByLabel('Show', { exact: true }).selectOption('PAID');
  await showing(rowOf(page, 'ada@example.com'), 'BANK-TX-1');
  await page.getByLabel('Show', { exact: true }).selectOption('FAILED');
  await showing(rowOf(page, 'grace@example.com'), 'FAILED');
  // Grace's commission is due again: the next run makes her a new draft.
  await page.getByRole('button', { name: 'Run payout' }).click();
  await showing(page.getByRole('status'), '1 draft payout created: US$10.00');
  await page.context().close();
});

test("reports: a period shows each affiliate's figures, downloads as CSV, and opens an affiliate's statement; a period backwards gets the API's message beside To", async () => {
  const { program, ada } = await programWithDueCommissions();
  const page = await signInAsProgramTeam(program);
  await go(page, 'reports');
  const adaRow = rowOf(page, 'ada@example.com');
  // The default period is the last 30 days: today's clicks, referrals and sales are in it.
  await showing(adaRow, /Ada Byron \(ada@example\.com\)USD311US\$100\.00US\$20\.00/);
  await showing(rowOf(page, 'grace@example.com'), /USD011US\$50\.00US\$10\.00/);

  const csv = await downloaded(page, () => page.getByRole('button', { name: 'Download CSV' }).click());
  expect(csv.name).toMatch(/^affiliates-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/);
  const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
  expect(rows.find((row) => row.affiliate_id === ada.id)).toEqual(
    expect.objectContaining({
      email: 'ada@example.com',
      currency: 'USD',
      clicks: '3',
      sales: '1',
      revenue: '100',
      commission_earned: '20',
      commission_due: '20',
    }),
  );

  await page.getByRole('button', { name: 'Statement of Ada Byron in USD' }).click();
  const statement = page.getByRole('region', { name: 'Statement of Ada Byron in USD' });
  await showing(statement, 'Closing balance');
  await showing(statement.getByRole('row').filter({ hasText: 'EARNED' }), 'US$20.00');
  const statementCsv = await downloaded(page, () => statement.getByRole('button', { name: 'Download statement CSV' }).click());
  expect(statementCsv.name).toBe('statement-ada@example.com-USD.csv');
  expect((parse(statementCsv.text, { columns: true }) as Record<string, string>[]).map((entry) => [entry.type, entry.amount])).toEqual([
    ['OPENING_BALANCE', '0'],
    ['EARNED', '20'],
    ['CLOSING_BALANCE', '20'],
  ]);
  await check(page, 'reports');

  await page.getByLabel('To (UTC day, excluded; empty: up to now)').fill('2020-01-01');
  await page.getByRole('button', { name: 'Show report' }).click();
  await showing(page.locator('#report-to-error'), 'to: must be after from');
  await page.context().close();
});

test("settings: saved settings are the program's; a bad value gets the API's own message beside its field and changes nothing", async () => {
  const { program } = await programWithDueCommissions();
  const page = await signInAsProgramTeam(program);
  await go(page, 'settings');
  await page.getByLabel('Name', { exact: true }).fill('Acme Partners');
  await page.getByLabel('Default commission rate, % (when neither the affiliate nor the program has a plan)').fill('15');
  await page.getByLabel('Destination 1: query parameters added (e.g. utm_source=affiliate)').fill('utm_source=affiliate');
  await page.getByLabel('New affiliates wait for approval').check();
  await page.getByLabel('Attribution model').selectOption('LAST_CLICK');
  await page.getByLabel('Attribution window in days (empty: clicks never expire)').fill('30');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await showing(page.getByRole('status'), 'Settings saved.');
  expect(await okBody(program.api.get('/program'))).toEqual(
    expect.objectContaining({
      name: 'Acme Partners',
      defaultCommissionRate: 15,
      destinationUrls: [{ url: 'https://shop.example.com/', params: { utm_source: 'affiliate' } }],
      requireApproval: true,
      attributionModel: 'LAST_CLICK',
      attributionWindowDays: 30,
    }),
  );

  await page.getByLabel("Query parameter carrying the affiliate's slug (e.g. ref: https://shop.example.com/?ref=ada)").fill('not ok!');
  await page
    .getByLabel('Origins allowed to use the publishable keys (one per line, e.g. https://shop.example.com)')
    .fill('https://shop.example.com/path');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await showing(page.locator('#url-modifier-error'), 'urlModifier can only contain letters, numbers, hyphens and underscores');
  await showing(page.locator('#allowed-origins-setting-error'), 'must be an exact origin such as https://shop.example.com');
  expect(await okBody(program.api.get('/program'))).toEqual(expect.objectContaining({ urlModifier: 'ref', allowedOrigins: [] }));

  await page.getByLabel('Stripe webhook signing secret (whsec_…; stored, never shown again)').fill('not-a-secret');
  await page.getByRole('button', { name: 'Save the signing secret' }).click();
  await showing(page.locator('#stripe-signing-secret-error'), 'must be the signing secret of a Stripe webhook endpoint');
  await page.getByLabel('Stripe webhook signing secret (whsec_…; stored, never shown again)').fill('whsec_test0123456789abcd');
  await page.getByRole('button', { name: 'Save the signing secret' }).click();
  await showing(page.getByRole('status').filter({ hasText: 'Signing secret' }), 'Signing secret saved.');
  await showing(page.getByText(/Signing secret set/), 'ends in abcd');
  await check(page, 'settings');
  await page.context().close();
});
