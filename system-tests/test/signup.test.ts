import { randomUUID } from 'node:crypto';
import { okBody, Subscriber, System, type Api } from '../harness';

/**
 * The hosted sign-up (`/join/{slug}`) and the approval of its applications, through the whole
 * system: the gateway checks and forwards, the affiliate service creates, the dispatcher delivers.
 * The form-encoded route of the page itself is driven in Chromium (gateway/test/signup.headless-chromium.test.ts).
 */
let system: System;
const subscriber = new Subscriber();
const SIGNUP_LIMIT = 5;

beforeAll(async () => {
  system = await System.start({ SIGNUP_RATE_LIMIT_POINTS: String(SIGNUP_LIMIT), SIGNUP_RATE_LIMIT_DURATION_SECONDS: '3600' });
  await subscriber.start();
}, 180_000);

afterAll(async () => {
  await subscriber.stop();
  await system?.stop();
});

const QUESTIONS = [
  { id: 'channel', label: 'Where do you publish?', type: 'TEXT', required: true },
  { id: 'site', label: 'Your website', type: 'URL', required: false },
  { id: 'audience', label: 'Audience size', type: 'SELECT', required: true, options: ['< 1k', '1k-10k', '> 10k'] },
  { id: 'pitch', label: 'Why you?', type: 'LONG_TEXT' },
];

type SignupProgram = { programId: string; api: Api; slug: string };

async function signupProgram(settings: Record<string, unknown> = {}): Promise<SignupProgram> {
  const program = await system.createProgram();
  const slug = `acme-${randomUUID().slice(0, 8)}`;
  await okBody(program.api.put('/program', { slug, signup: { enabled: true, introText: 'Earn 20%', questions: QUESTIONS }, ...settings }));
  return { ...program, slug };
}

const apply = (slug: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${system.gatewayUrl}/join/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const applicant = (email = `${randomUUID().slice(0, 8)}@example.com`) => ({
  firstName: 'Grace',
  lastName: 'Hopper',
  email,
  answers: { channel: 'A cooking blog', site: 'https://grace.example.com', audience: '1k-10k' },
});

const affiliatesOf = async (program: SignupProgram) =>
  (await okBody(program.api.get('/affiliates'))) as { email: string; status: string; id: string }[];

async function eventually<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('an application to an open sign-up creates an ACTIVE affiliate with its answers and a first link, and emits affiliate.created with the answers', async () => {
  const program = await signupProgram();
  await okBody(program.api.post('/webhook-endpoints', { url: await subscriber.start(), eventTypes: ['affiliate.created'] }));
  const person = applicant();
  const answer = await apply(program.slug, person);
  expect(answer.status).toBe(201);
  expect(await answer.json()).toEqual({ status: 'ACTIVE' });

  const affiliate = await okBody(program.api.get(`/affiliates?email=${encodeURIComponent(person.email)}`));
  expect(affiliate).toMatchObject({ status: 'ACTIVE', firstName: 'Grace', lastName: 'Hopper' });
  expect(affiliate.affiliateLinks).toHaveLength(1);
  expect(affiliate.signupAnswers).toEqual([
    { questionId: 'channel', question: 'Where do you publish?', answer: 'A cooking blog' },
    { questionId: 'site', question: 'Your website', answer: 'https://grace.example.com' },
    { questionId: 'audience', question: 'Audience size', answer: '1k-10k' },
  ]);
  const created = await eventually(
    () => subscriber.events('affiliate.created').filter((delivery) => delivery.body.data.id === affiliate.id),
    (events) => events.length > 0,
  );
  expect(created).toHaveLength(1);
  expect(created[0]!.body.data.signupAnswers).toEqual(affiliate.signupAnswers);
});

test('when the program requires approval, an application is PENDING, and approving or rejecting it with PUT /affiliates reaches subscribers as affiliate.updated', async () => {
  const program = await signupProgram({ requireApproval: true });
  await okBody(program.api.post('/webhook-endpoints', { url: await subscriber.start(), eventTypes: ['affiliate.updated'] }));
  const [first, second] = [applicant(), applicant()];
  expect(await (await apply(program.slug, first)).json()).toEqual({ status: 'PENDING' });
  expect(await (await apply(program.slug, second)).json()).toEqual({ status: 'PENDING' });
  const queue = (await okBody(program.api.get('/affiliates?status=PENDING'))) as { id: string; email: string }[];
  expect(queue.map((affiliate) => affiliate.email).sort()).toEqual([first.email, second.email].sort());

  const approve = queue.find((affiliate) => affiliate.email === first.email)!;
  const reject = queue.find((affiliate) => affiliate.email === second.email)!;
  expect((await okBody(program.api.put('/affiliates', { affiliateId: approve.id, status: 'ACTIVE' }))).status).toBe('ACTIVE');
  expect((await okBody(program.api.put('/affiliates', { affiliateId: reject.id, status: 'REJECTED' }))).status).toBe('REJECTED');
  expect(await okBody(program.api.get('/affiliates?status=PENDING'))).toEqual([]);
  const statuses = await eventually(
    () =>
      new Map(
        subscriber.events('affiliate.updated').map((delivery) => [delivery.body.data.id as string, delivery.body.data.status as string]),
      ),
    (seen) => seen.has(approve.id) && seen.has(reject.id),
  );
  expect(statuses.get(approve.id)).toBe('ACTIVE');
  expect(statuses.get(reject.id)).toBe('REJECTED');
});

test('a missing required answer, an unknown question, a malformed URL and a choice outside the options are one 400 listing each problem, and nothing is created', async () => {
  const program = await signupProgram();
  const answer = await apply(program.slug, { ...applicant(), answers: { site: 'not a url', audience: 'huge', favourite: 'x' } });
  expect(answer.status).toBe(400);
  const body = (await answer.json()) as { error: string; errors: { message: string }[] };
  const messages = body.errors.map((problem) => problem.message);
  expect(messages).toEqual(
    expect.arrayContaining([
      'answers.favourite: there is no question favourite',
      'answers.channel: "Where do you publish?" is required',
      'answers.site: "Your website" must be an http or https URL',
      'answers.audience: "Audience size" must be one of "< 1k", "1k-10k", "> 10k"',
    ]),
  );
  expect(await affiliatesOf(program)).toEqual([]);
});

test('a question id that is also an Object.prototype name (constructor, toString) left blank is a 400 naming the question, not a 500, and nothing is created', async () => {
  const questions = [
    { id: 'constructor', label: 'Who built your site?', type: 'TEXT', required: true },
    { id: 'toString', label: 'Anything else?', type: 'TEXT', required: false },
  ];
  const program = await signupProgram({ signup: { enabled: true, questions } });
  const blank = await apply(program.slug, { ...applicant(), answers: {} });
  expect(blank.status).toBe(400);
  expect(await blank.json()).toMatchObject({ error: 'answers.constructor: "Who built your site?" is required' });
  expect(await affiliatesOf(program)).toEqual([]);
  const answered = await apply(program.slug, { ...applicant(), answers: { constructor: 'Me' } });
  expect(answered.status).toBe(201);
  expect((await affiliatesOf(program))[0]).toMatchObject({
    signupAnswers: [{ questionId: 'constructor', question: 'Who built your site?', answer: 'Me' }],
  });
});

test('an application with an email already in the program is refused with the duplicate-email message, and nothing else is created', async () => {
  const program = await signupProgram();
  const person = applicant();
  expect((await apply(program.slug, person)).status).toBe(201);
  const again = await apply(program.slug, { ...person, firstName: 'Other' });
  expect(again.status).toBe(400);
  expect(await again.json()).toMatchObject({ error: `email: an affiliate with email ${person.email} already exists in this program` });
  expect(await affiliatesOf(program)).toHaveLength(1);
});

test('an unknown slug, or a program whose sign-up is disabled, is 404 for the page and for applications', async () => {
  const program = await signupProgram();
  expect((await fetch(`${system.gatewayUrl}/join/no-such-program-${randomUUID().slice(0, 6)}`)).status).toBe(404);
  expect((await fetch(`${system.gatewayUrl}/join/${program.slug}`)).status).toBe(200);
  await okBody(program.api.put('/program', { signup: { enabled: false, questions: QUESTIONS } }));
  expect((await fetch(`${system.gatewayUrl}/join/${program.slug}`)).status).toBe(404);
  expect((await apply(program.slug, applicant())).status).toBe(404);
  expect(await affiliatesOf(program)).toEqual([]);
});

test("a slug is unique across programs: taking another program's is a 400 and changes nothing; a malformed slug is a 400", async () => {
  const owner = await signupProgram();
  const other = await system.createProgram();
  const taken = await other.api.put('/program', { slug: owner.slug, name: 'Renamed' });
  expect(taken.status).toBe(400);
  expect(taken.body.error).toBe(`slug: ${owner.slug} is already taken by another program; choose another`);
  expect((await okBody(other.api.get('/program'))).name).not.toBe('Renamed');
  const malformed = await other.api.put('/program', { slug: 'Not A Slug' });
  expect(malformed.status).toBe(400);
  expect(malformed.body.error).toMatch(/^slug can only contain/);
});

test('sign-up settings that cannot work are a 400 naming the problem: a SELECT without options, a question id twice', async () => {
  const program = await system.createProgram();
  const noOptions = await program.api.put('/program', {
    signup: { enabled: true, questions: [{ id: 'a', label: 'Pick', type: 'SELECT' }] },
  });
  expect(noOptions.status).toBe(400);
  expect(noOptions.body.error).toContain('a SELECT question needs at least one option');
  const twice = await program.api.put('/program', {
    signup: {
      enabled: true,
      questions: [
        { id: 'a', label: 'A', type: 'TEXT' },
        { id: 'a', label: 'B', type: 'TEXT' },
      ],
    },
  });
  expect(twice.status).toBe(400);
  expect(twice.body.error).toContain('each question id once');
  expect((await okBody(program.api.get('/program'))).signup).toBeUndefined();
});

test("a JSON application from a browser is answered with CORS only for the program's allowedOrigins; any other origin is 403 and creates nothing", async () => {
  const program = await signupProgram({ allowedOrigins: ['https://shop.example.com'] });
  const preflight = await fetch(`${system.gatewayUrl}/join/${program.slug}`, {
    method: 'OPTIONS',
    headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' },
  });
  expect(preflight.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
  const foreignPreflight = await fetch(`${system.gatewayUrl}/join/${program.slug}`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
  });
  expect(foreignPreflight.headers.get('access-control-allow-origin')).toBeNull();

  const allowed = await apply(program.slug, applicant(), { origin: 'https://shop.example.com' });
  expect(allowed.status).toBe(201);
  expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
  const foreign = await apply(program.slug, applicant(), { origin: 'https://evil.example' });
  expect(foreign.status).toBe(403);
  expect(await affiliatesOf(program)).toHaveLength(1);
});

test('the form-encoded route takes only what its own page sent: another origin, or no signed form token, is refused and creates nothing', async () => {
  const program = await signupProgram();
  const form = (origin: string, token: string | null) => {
    const fields = new URLSearchParams({
      firstName: 'Eve',
      lastName: 'Forger',
      email: `${randomUUID().slice(0, 8)}@example.com`,
      'answers[channel]': 'x',
      'answers[audience]': '< 1k',
    });
    if (token !== null) fields.set('formToken', token);
    return fetch(`${system.gatewayUrl}/join/${program.slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: fields.toString(),
    });
  };
  const page = await (await fetch(`${system.gatewayUrl}/join/${program.slug}`)).text();
  const token = /name="formToken" value="([^"]+)"/.exec(page)![1]!;
  expect((await form('https://evil.example', token)).status).toBe(403);
  const noToken = await form(system.gatewayUrl, null);
  expect(noToken.status).toBe(400);
  expect(await noToken.text()).toContain('This form has expired');
  expect((await form(system.gatewayUrl, `${token.split('.')[0]}.${'A'.repeat(43)}`)).status).toBe(400);
  expect(await affiliatesOf(program)).toEqual([]);
  expect((await form(system.gatewayUrl, token)).status).toBe(200);
  expect(await affiliatesOf(program)).toHaveLength(1);
});

test('applications from one address beyond the per-address limit are 429 with Retry-After, and create nothing', async () => {
  const program = await signupProgram();
  for (let index = 0; index < SIGNUP_LIMIT; index += 1) expect((await apply(program.slug, applicant())).status).toBe(201);
  const refused = await apply(program.slug, applicant());
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await affiliatesOf(program)).toHaveLength(SIGNUP_LIMIT);
});

const formTokenOf = async (slug: string) =>
  /name="formToken" value="([^"]+)"/.exec(await (await fetch(`${system.gatewayUrl}/join/${slug}`)).text())![1]!;
const postForm = (slug: string, token: string, fields: Record<string, string>) =>
  fetch(`${system.gatewayUrl}/join/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: system.gatewayUrl },
    body: new URLSearchParams({ ...fields, formToken: token }).toString(),
  });
const formFields = (email = `${randomUUID().slice(0, 8)}@example.com`) => ({
  firstName: 'Ada',
  lastName: 'Lovelace',
  email,
  'answers[channel]': 'A blog',
  'answers[audience]': '< 1k',
});

test("program A's form token posted to program B's sign-up is refused, and nothing is created in either", async () => {
  const [a, b] = [await signupProgram(), await signupProgram()];
  const refused = await postForm(b.slug, await formTokenOf(a.slug), formFields());
  expect(refused.status).toBe(400);
  expect(await refused.text()).toContain('This form has expired');
  expect(await affiliatesOf(a)).toEqual([]);
  expect(await affiliatesOf(b)).toEqual([]);
});

test("program A's allowed origin sending JSON to program B's sign-up gets no CORS and a 403, and nothing is created", async () => {
  const a = await signupProgram({ allowedOrigins: ['https://a-shop.example.com'] });
  const b = await signupProgram({ allowedOrigins: ['https://b-shop.example.com'] });
  const preflight = await fetch(`${system.gatewayUrl}/join/${b.slug}`, {
    method: 'OPTIONS',
    headers: { origin: 'https://a-shop.example.com', 'access-control-request-method': 'POST' },
  });
  expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  const answer = await apply(b.slug, applicant(), { origin: 'https://a-shop.example.com' });
  expect(answer.status).toBe(403);
  expect(answer.headers.get('access-control-allow-origin')).toBeNull();
  expect(await affiliatesOf(a)).toEqual([]);
  expect(await affiliatesOf(b)).toEqual([]);
});

test("program B's key cannot issue codes with program A's coupon or to A's affiliates, nor list A's PENDING applicants", async () => {
  const a = await signupProgram({ requireApproval: true });
  const b = await signupProgram();
  expect((await apply(a.slug, applicant())).status).toBe(201);
  const [pending] = (await okBody(a.api.get('/affiliates?status=PENDING'))) as { id: string }[];
  const active = await okBody(
    a.api.post('/affiliates', { firstName: 'Ann', lastName: 'Active', email: `${randomUUID().slice(0, 8)}@example.com` }),
  );
  await okBody(a.api.put('/affiliates', { affiliateId: active.id, status: 'ACTIVE' }));
  const couponOfA = await okBody(a.api.post('/coupons', { name: 'A only', percentOff: 10 }));
  const couponOfB = await okBody(b.api.post('/coupons', { name: 'B only', percentOff: 10 }));

  const withACoupon = await b.api.post('/promotional-codes/bulk', {
    couponId: couponOfA.id,
    allActive: true,
    codeStructure: { randomChars: true },
  });
  expect(withACoupon.status).toBe(404);
  const withAAffiliates = await b.api.post('/promotional-codes/bulk', {
    couponId: couponOfB.id,
    affiliateIds: [active.id, pending!.id],
    codeStructure: { randomChars: true },
  });
  expect(withAAffiliates.status).toBe(404);
  expect(await okBody(a.api.get(`/promotional-codes?couponId=${couponOfA.id}`))).toEqual([]);
  expect(await okBody(b.api.get(`/promotional-codes?couponId=${couponOfB.id}`))).toEqual([]);
  expect(await okBody(b.api.get('/affiliates?status=PENDING'))).toEqual([]);
});

test('a refused form submission answers an HTML 400 page listing each problem, and creates nothing', async () => {
  const program = await signupProgram();
  const answer = await postForm(program.slug, await formTokenOf(program.slug), {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'not an email',
    'answers[site]': 'not a url',
    'answers[audience]': 'huge',
  });
  expect(answer.status).toBe(400);
  expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await answer.text();
  for (const problem of ['is required', 'must be an http or https URL', 'must be one of']) expect(html).toContain(problem);
  expect(html).toMatch(/email/i);
  expect(await affiliatesOf(program)).toEqual([]);
});

test('a form submission with an email already in the program answers an HTML 400 page with the duplicate-email message, and creates nothing more', async () => {
  const program = await signupProgram();
  const email = `${randomUUID().slice(0, 8)}@example.com`;
  expect((await postForm(program.slug, await formTokenOf(program.slug), formFields(email))).status).toBe(200);
  const again = await postForm(program.slug, await formTokenOf(program.slug), { ...formFields(email), firstName: 'Other' });
  expect(again.status).toBe(400);
  expect(again.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await again.text()).toContain(`an affiliate with email ${email} already exists in this program`);
  expect(await affiliatesOf(program)).toHaveLength(1);
});
