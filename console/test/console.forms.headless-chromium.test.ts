import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { okBody, type Api, type ApiResponse } from '../../system-tests/harness';
import { checkPage, newPage, runningSystemAndChromium, showing, signInAsMember, type PageWatch } from './chromium-pages';

/**
 * The console's forms in headless Chromium against the whole system: a refused form shows the API's
 * own message beside the field the API names (the field's accessible description), however deep the
 * field (`allowedOrigins.1`, `signup.questions.0.options`), and the refused change changes nothing.
 */
const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'console');

const running = runningSystemAndChromium();
let program: { programId: string; key: string; api: Api };
const watch: PageWatch = { outside: [], pageErrors: [] };

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  program = await running.system.createProgram({ name: 'Forms program' });
}, 60_000);

/** The console signed in to the program, on one of its pages. */
async function signedIn(route: string): Promise<Page> {
  const page = await newPage(running.browser, running.system.gatewayUrl, watch);
  await signInAsMember(page, running.system, program.programId, 'OWNER');
  await page.goto(`${running.system.gatewayUrl}/console#/${route}`);
  return page;
}

/** What a screen reader says about the field besides its label: the text of the elements its aria-describedby names. */
async function descriptionOf(field: Locator): Promise<string> {
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
  const texts = await Promise.all(ids.map(async (id) => (await field.page().locator(`[id="${id}"]`).textContent()) ?? ''));
  return texts.join(' ');
}

async function describedAs(field: Locator, expected: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = await descriptionOf(field);
  while (seen !== expected) {
    if (Date.now() > deadline)
      throw new Error(`expected the field to be described as ${JSON.stringify(expected)}, it is ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await descriptionOf(field);
  }
}

/** The message the API gives for one field of a refused request, as any integrator would read it. */
async function apiMessage(answer: Promise<ApiResponse>, param: string): Promise<string> {
  const { status, body } = (await answer) as ApiResponse<{
    error: string;
    param?: string;
    errors?: { param: string | null; message: string }[];
  }>;
  expect(status).toBe(400);
  const message = body.errors?.find((problem) => problem.param === param)?.message ?? (body.param === param ? body.error : undefined);
  if (!message) throw new Error(`the API did not name ${param}: ${JSON.stringify(body)}`);
  return message;
}

test('a refused setting shows the API’s message beside the line of the field it names, and the settings stay as they were', async () => {
  const page = await signedIn('tracking');
  const before = await okBody(program.api.get('/program'));
  const origins = page.getByLabel(/Allowed origins/);
  await origins.fill('https://shop.example.com\nnot an origin');
  await page.getByRole('button', { name: 'Save tracking settings' }).click();
  const expected = await apiMessage(
    program.api.put('/program', { allowedOrigins: ['https://shop.example.com', 'not an origin'] }),
    'allowedOrigins.1',
  );
  await describedAs(origins, expected);
  await showing(page.locator('p.error[role="alert"]'), expected);
  expect((await okBody(program.api.get('/program'))).allowedOrigins).toEqual(before.allowedOrigins);
  await checkPage(page, 'tracking-field-error', join(SCREENSHOTS, 'tracking-field-error.png'));

  // Corrected, the message goes and the settings are saved.
  await origins.fill('https://shop.example.com');
  await page.getByRole('button', { name: 'Save tracking settings' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor({ timeout: 10_000 });
  expect(await descriptionOf(origins)).toBe('');
  expect((await okBody(program.api.get('/program'))).allowedOrigins).toEqual(['https://shop.example.com']);
  await page.context().close();
});

test('a refused sign-up question shows the API’s message beside that question’s field', async () => {
  const page = await signedIn('signup');
  await page.getByRole('button', { name: 'Add a question' }).click();
  await page.getByLabel('Question 1 id').fill('audience');
  await page.getByLabel('Question 1 label').fill('Audience size');
  await page.getByLabel('Question 1 type').selectOption('SELECT');
  await page.getByRole('button', { name: 'Save sign-up settings' }).click();
  const expected = await apiMessage(
    program.api.put('/program', {
      signup: { enabled: false, questions: [{ id: 'audience', label: 'Audience size', type: 'SELECT', required: false, options: [] }] },
    }),
    'signup.questions.0.options',
  );
  await describedAs(page.getByLabel('Question 1 choices (comma-separated)'), expected);
  expect((await okBody(program.api.get('/program'))).signup?.questions ?? []).toEqual([]);
  await checkPage(page, 'signup-field-error', join(SCREENSHOTS, 'signup-field-error.png'));
  await page.context().close();
});

test('a refused webhook endpoint shows the API’s message beside its URL, and no endpoint is created', async () => {
  const page = await signedIn('webhooks');
  await page.getByLabel('URL').fill('ftp://example.com/hooks');
  await page.getByRole('group', { name: 'Event types to receive' }).getByLabel('sale.created').check();
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  const expected = await apiMessage(
    program.api.post('/webhook-endpoints', { url: 'ftp://example.com/hooks', eventTypes: ['sale.created'] }),
    'url',
  );
  await describedAs(page.getByLabel('URL'), expected);
  expect(await okBody(program.api.get('/webhook-endpoints'))).toEqual([]);
  await page.context().close();
});

test('no page loaded anything from another origin or reported a script error', () => {
  expect(watch.outside).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
});
