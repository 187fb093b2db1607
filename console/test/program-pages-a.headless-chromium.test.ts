import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { okBody, type Api } from '../../system-tests/harness';
import { checkPage, runningSystemAndChromium, newPage, showing, signInAsMember, type PageWatch } from './chromium-pages';

/**
 * The pages a team runs its program from (issue 32), in headless Chromium against the whole system:
 * affiliates (the approval queue with its answers, approve on a plan, edit), commission plans (create,
 * edit, default, the API's refusal to delete one in use) and coupons with their codes (create, edit,
 * deactivate, generate for a group of affiliates). Each form's bad input shows the API's own message
 * beside the field; each page passes axe and is photographed into docs/.
 */
const DOCS = join(__dirname, '..', '..', 'docs');

type Program = { programId: string; key: string; api: Api };

const running = runningSystemAndChromium();
const watch: PageWatch = { outside: [], pageErrors: [] };

beforeAll(() => mkdirSync(DOCS, { recursive: true }));

/** The one sign-in step of each test: an OWNER's session (signInAsMember), then the page of `route`. */
async function signedIn(program: Program, route: string, heading: string): Promise<Page> {
  const page = await newPage(running.browser, running.system.gatewayUrl, watch);
  await signInAsMember(page, running.system, program.programId, 'OWNER');
  await page.goto(`${running.system.gatewayUrl}/console#/${route}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 10_000 });
  return page;
}

/** The API's own answer to a request the page also makes: what the page must show, word for word. */
async function refusal(answer: Promise<{ status: number; body: { error: string } }>): Promise<string> {
  const { status, body } = await answer;
  expect(status).toBe(400);
  return body.error;
}

async function activeAffiliate(api: Api, firstName: string): Promise<{ id: string; email: string }> {
  return okBody(api.post('/affiliates', { firstName, lastName: 'Partner', email: `${firstName.toLowerCase()}@example.com` }));
}

test('the approval queue, linked from the Sign-up page, shows each application with its sign-up answers; Approve puts it on the plan chosen, Reject refuses it; an affiliate is edited, and a bad email shows the API message beside the field', async () => {
  const program: Program = await running.system.createProgram({ name: 'Queue program' });
  const slug = `queue-${randomUUID().slice(0, 8)}`;
  await okBody(
    program.api.post('/commission-plans', {
      name: 'Standard 10%',
      commissionType: 'PERCENTAGE',
      rate: 10,
      recurring: 'FOREVER',
      isDefault: true,
    }),
  );
  const partners = await okBody(
    program.api.post('/commission-plans', { name: 'Partners 25%', commissionType: 'PERCENTAGE', rate: 25, recurring: 'FOREVER' }),
  );
  await okBody(
    program.api.put('/program', {
      slug,
      requireApproval: true,
      signup: { enabled: true, questions: [{ id: 'channel', label: 'Where do you publish?', type: 'TEXT', required: true }] },
    }),
  );
  for (const [first, channel] of [
    ['Grace', 'A cooking blog'],
    ['Eve', 'Coupon spam'],
  ] as const) {
    const applied = await fetch(`${running.system.gatewayUrl}/join/${slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ firstName: first, lastName: 'Applicant', email: `${first.toLowerCase()}@example.com`, answers: { channel } }),
    });
    expect(applied.status).toBe(201);
  }
  // The console's one approval queue, which the Sign-up page links to.
  const page = await signedIn(program, 'signup', 'Sign-up');
  await page.getByRole('main').getByRole('link', { name: 'Approve and edit affiliates' }).click();
  await page.getByRole('heading', { level: 1, name: 'Affiliates' }).waitFor();

  const queue = page.getByRole('table', { name: 'Applications waiting for approval, newest first' });
  await queue.getByRole('cell', { name: 'grace@example.com', exact: true }).waitFor();
  await showing(queue, 'A cooking blog');
  await showing(queue, 'Coupon spam');
  await page.getByLabel('Plan for grace@example.com').selectOption({ label: 'Partners 25%' });
  await checkPage(page, 'affiliates', join(DOCS, 'console-affiliates.png'));
  await page.getByRole('button', { name: 'Approve grace@example.com' }).click();
  await queue.getByRole('cell', { name: 'grace@example.com', exact: true }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Reject eve@example.com' }).click();
  await queue.getByRole('cell', { name: 'eve@example.com', exact: true }).waitFor({ state: 'detached' });
  const grace = await okBody(program.api.get('/affiliates?email=grace@example.com'));
  expect(grace).toMatchObject({ status: 'ACTIVE', commissionPlan: { id: partners.id, name: 'Partners 25%' } });
  expect((await okBody(program.api.get('/affiliates?email=eve@example.com'))).status).toBe('REJECTED');

  const everyone = page.getByRole('table', { name: 'Affiliates of the program, newest first' });
  await showing(everyone.getByRole('row').filter({ hasText: 'grace@example.com' }), 'Partners 25%');
  await page.getByRole('button', { name: 'Edit grace@example.com' }).click();
  const badEmail = await refusal(program.api.put('/affiliates', { affiliateId: grace.id, email: 'not-an-email' }));
  await page.getByLabel('Email address').fill('not-an-email');
  await page.getByRole('button', { name: 'Save affiliate' }).click();
  await showing(page.locator('#affiliate-email-error'), badEmail);
  expect(await page.getByLabel('Email address').getAttribute('aria-describedby')).toBe('affiliate-email-error');
  expect((await okBody(program.api.get(`/affiliates?id=${grace.id}`))).email).toBe('grace@example.com');

  await page.getByLabel('Email address').fill('grace.hopper@example.com');
  await page.getByLabel('Last name').fill('Hopper');
  await page.getByLabel('Commission plan').selectOption({ label: "The program's default (Standard 10%)" });
  await page.getByRole('button', { name: 'Save affiliate' }).click();
  await showing(everyone, 'grace.hopper@example.com');
  expect(await okBody(program.api.get(`/affiliates?id=${grace.id}`))).toMatchObject({
    lastName: 'Hopper',
    email: 'grace.hopper@example.com',
    status: 'ACTIVE',
    commissionPlan: { name: 'Standard 10%' },
  });
  await page.context().close();
});

test('commission plans: one created, edited and made the default from the page; one unused deleted; deleting a plan in use, or the default, shows the API refusal and deletes nothing; a bad rate shows the API message beside the field', async () => {
  const program: Program = await running.system.createProgram({ name: 'Plans program' });
  const silver = await okBody(
    program.api.post('/commission-plans', { name: 'Silver 10%', commissionType: 'PERCENTAGE', rate: 10, recurring: 'ONCE' }),
  );
  await okBody(
    program.api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', commissionPlanId: silver.id }),
  );
  await okBody(program.api.post('/commission-plans', { name: 'Bronze 5%', commissionType: 'PERCENTAGE', rate: 5, recurring: 'ONCE' }));
  const page = await signedIn(program, 'plans', 'Commission plans');
  const plans = page.getByRole('table', { name: 'Commission plans' });
  await showing(plans, 'Silver 10%');

  const tooMuch = await refusal(
    program.api.post('/commission-plans', { name: 'Gold', commissionType: 'PERCENTAGE', rate: 150, recurring: 'FOREVER' }),
  );
  await page.getByLabel('Plan name').fill('Gold');
  await page.getByLabel('Rate (% of the sale)').fill('150');
  await page.getByRole('button', { name: 'Create plan' }).click();
  await showing(page.locator('#new-plan-rate-error'), tooMuch);

  await page.getByLabel('Rate (% of the sale)').fill('15');
  await page.getByLabel('Recurring payments').selectOption('LIMITED');
  await page.getByLabel('Months recurring payments earn').fill('12');
  await page.getByLabel('Days a commission is held before it is due').fill('14');
  await page.getByRole('button', { name: 'Add a tier' }).click();
  await page.getByLabel('Tier 1 threshold').fill('10');
  await page.getByLabel('Tier 1 rate').fill('20');
  await page.getByRole('button', { name: 'Create plan' }).click();
  await showing(plans, 'Gold');
  const gold = (await okBody(program.api.get('/commission-plans'))).find((plan: { name: string }) => plan.name === 'Gold');
  expect(gold).toMatchObject({
    commissionType: 'PERCENTAGE',
    rate: 15,
    recurring: 'LIMITED',
    recurringMonths: 12,
    holdDays: 14,
    tiers: [{ metric: 'SALES_COUNT', threshold: 10, rate: 20 }],
    isDefault: false,
  });

  await page.getByRole('button', { name: 'Edit Gold' }).click();
  const editing = page.getByRole('form', { name: 'Edit Gold' });
  await editing.getByLabel('Plan name').fill('Gold 18%');
  await editing.getByLabel('Rate (% of the sale)').fill('18');
  await editing.getByLabel('Minimum payout (optional)').fill('50');
  await editing.getByRole('button', { name: 'Save plan' }).click();
  await showing(plans, 'Gold 18%');
  expect(await okBody(program.api.get(`/commission-plans?id=${gold.id}`))).toMatchObject({ name: 'Gold 18%', rate: 18, minimumPayout: 50 });

  await page.getByRole('button', { name: 'Make Gold 18% the default' }).click();
  await showing(plans.getByRole('row').filter({ hasText: 'Gold 18%' }), 'Default');
  expect((await okBody(program.api.get(`/commission-plans?id=${gold.id}`))).isDefault).toBe(true);

  const inUse = await refusal(program.api.delete('/commission-plans', { commissionPlanId: silver.id }));
  expect(inUse).toMatch(/1 affiliate is on it/);
  await page.getByRole('button', { name: 'Delete Silver 10%' }).click();
  await page.getByRole('button', { name: 'Confirm: delete Silver 10%' }).click();
  await showing(page.locator('.action').filter({ hasText: 'Confirm: delete Silver 10%' }).getByRole('alert'), inUse);
  const theDefault = await refusal(program.api.delete('/commission-plans', { commissionPlanId: gold.id }));
  await page.getByRole('button', { name: 'Delete Gold 18%' }).click();
  await page.getByRole('button', { name: 'Confirm: delete Gold 18%' }).click();
  await showing(page.locator('.action').filter({ hasText: 'Confirm: delete Gold 18%' }).getByRole('alert'), theDefault);
  await page.getByRole('button', { name: 'Delete Bronze 5%' }).click();
  await page.getByRole('button', { name: 'Confirm: delete Bronze 5%' }).click();
  await plans.getByRole('cell', { name: 'Bronze 5%', exact: true }).waitFor({ state: 'detached', timeout: 10_000 });
  expect((await okBody(program.api.get('/commission-plans'))).map((plan: { name: string }) => plan.name).sort()).toEqual([
    'Gold 18%',
    'Silver 10%',
  ]);
  await checkPage(page, 'plans', join(DOCS, 'console-plans.png'));
  await page.context().close();
});

test('coupons: one created with a code, edited, the code edited, its codes generated for two affiliates, then deactivated; a bad percentOff shows the API message beside the field', async () => {
  const program: Program = await running.system.createProgram({ name: 'Coupons program' });
  const ada = await activeAffiliate(program.api, 'Ada');
  const grace = await activeAffiliate(program.api, 'Grace');
  await activeAffiliate(program.api, 'Linus');
  const page = await signedIn(program, 'coupons', 'Coupons and promotional codes');

  const outOfRange = await refusal(program.api.post('/coupons', { name: 'Summer', percentOff: 150 }));
  await page.getByLabel('Coupon name').fill('Summer');
  await page.getByLabel('Percent off (1 to 100)').fill('150');
  await page.getByRole('button', { name: 'Create coupon' }).click();
  await showing(page.locator('#coupon-percent-off-error'), outOfRange);
  expect(await okBody(program.api.get('/coupons'))).toEqual([]);

  await page.getByLabel('Percent off (1 to 100)').fill('15');
  await page.getByRole('button', { name: 'Create coupon' }).click();
  await page.getByRole('heading', { name: 'Coupon Summer' }).waitFor({ timeout: 10_000 });
  const panel = page.getByRole('region', { name: 'Coupon Summer' });
  await panel.getByLabel('Code (letters, numbers, hyphens and underscores)').fill('SUMMER15');
  await panel.getByLabel('Affiliate its sales are attributed to').selectOption(ada.id);
  await panel.getByRole('button', { name: 'Add code' }).click();
  await showing(page.getByRole('table', { name: 'Promotional codes of Summer' }), 'SUMMER15');
  const [created] = await okBody(program.api.get('/coupons'));
  expect(created).toMatchObject({
    name: 'Summer',
    percentOff: 15,
    valid: true,
    promotionalCodes: [{ code: 'SUMMER15', affiliateId: ada.id }],
  });

  await panel.getByLabel('Coupon name').fill('Summer sale');
  await panel.getByLabel('Redemptions allowed across its codes (blank: unlimited)').fill('100');
  await panel.getByRole('button', { name: 'Save coupon' }).click();
  const renamed = page.getByRole('region', { name: 'Coupon Summer sale' });
  await renamed.waitFor({ timeout: 10_000 });
  expect(await okBody(program.api.get(`/coupons?id=${created.id}`))).toMatchObject({ name: 'Summer sale', maxRedemptions: 100 });

  // A code is edited in its own form: its redemptions capped and kept to the assigned affiliate.
  await renamed.getByRole('button', { name: 'Edit SUMMER15' }).click();
  const editCode = renamed.getByRole('form', { name: 'Edit code SUMMER15' });
  await editCode.getByLabel('Redemptions allowed for this code (blank: unlimited)').fill('5');
  await editCode.getByLabel('Only that affiliate may redeem it').check();
  await editCode.getByRole('button', { name: 'Save code' }).click();
  await showing(editCode.getByRole('status'), 'Code saved.');
  expect(await okBody(program.api.get('/promotional-codes?code=SUMMER15'))).toMatchObject({ maxRedemptions: 5, limitToAffiliate: true });

  await renamed.getByLabel('Prefix (optional, at most 20 characters)').fill('SUN');
  await renamed.getByLabel('Ada Partner (ada@example.com)').check();
  await renamed.getByLabel('Grace Partner (grace@example.com)').check();
  await renamed.getByRole('button', { name: 'Generate codes' }).click();
  await showing(renamed.getByRole('status').filter({ hasText: 'issued' }), '2 codes issued');
  const codes = await okBody(program.api.get(`/promotional-codes?couponId=${created.id}`));
  const generated = codes.filter((code: { isAutoGenerated: boolean }) => code.isAutoGenerated);
  expect(generated.map((code: { affiliateId: string }) => code.affiliateId).sort()).toEqual([ada.id, grace.id].sort());
  for (const code of generated) expect(code.code).toMatch(/^SUN(ADA|GRACE)[A-Z0-9]{6}$/);
  await showing(page.getByRole('table', { name: 'Promotional codes of Summer sale' }), generated[0].code);

  await renamed.getByRole('button', { name: 'Deactivate SUMMER15' }).click();
  await renamed.getByRole('button', { name: 'Reactivate SUMMER15' }).waitFor({ timeout: 10_000 });
  expect((await okBody(program.api.get('/promotional-codes?code=SUMMER15'))).active).toBe(false);
  await renamed.getByRole('button', { name: 'Deactivate coupon' }).click();
  await renamed.getByRole('button', { name: 'Reactivate coupon' }).waitFor({ timeout: 10_000 });
  await showing(page.getByRole('table', { name: 'Coupons, newest first' }), 'deactivated');
  expect((await okBody(program.api.get(`/coupons?id=${created.id}`))).valid).toBe(false);
  await checkPage(page, 'coupons', join(DOCS, 'console-coupons.png'));
  await page.context().close();
});

test('no page loaded anything from another origin, broke the Content-Security-Policy or threw', () => {
  expect(watch).toEqual({ outside: [], pageErrors: [] });
});
