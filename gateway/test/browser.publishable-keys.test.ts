import { API_OPERATIONS } from '@affiliate/contracts';
import { bootService, type RunningService } from '@affiliate/platform';
import { eventually, testServiceSettings, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildAffiliateService } from '../../services/affiliate/src/service';
import { buildReferralService } from '../../services/referral/src/service';
import type { GatewaySettings } from '../src/config';
import type { RunningGateway } from '../src/gateway';
import {
  adminAuth,
  bearer,
  createProgramWithKey,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type ProgramWithKey,
} from './support';

const SHOP = 'https://shop.example.com';

let affiliate: RunningService;
let referral: RunningService;
let echo: EchoUpstream;
let gateway: RunningGateway;
let programA: ProgramWithKey & { publishableKey: string };
let programB: ProgramWithKey & { publishableKey: string };

async function programWithPublishableKey(settings: Record<string, unknown>): Promise<ProgramWithKey & { publishableKey: string }> {
  const program = await createProgramWithKey(gateway, settings);
  const created = await request(gateway.url).post(`/admin/v1/programs/${program.programId}/publishable-keys`).set(adminAuth).expect(200);
  return { ...program, publishableKey: created.body.key as string };
}

beforeAll(async () => {
  const exchange = uniqueName('test_events');
  affiliate = await bootService(testServiceSettings('affiliate', { exchange }), (context) => buildAffiliateService(context));
  referral = await bootService(testServiceSettings('referral', { exchange }), (context) =>
    buildReferralService(context, { affiliateUrl: affiliate.url }),
  );
  echo = await startEchoUpstream();
  gateway = await startGateway({
    exchange,
    upstreams: { coupon: echo.url, affiliate: affiliate.url, referral: referral.url, sale: echo.url, 'webhook-dispatcher': echo.url },
    browserAddressRateLimit: { points: 40, duration: 60 },
  });
  programA = await programWithPublishableKey({ allowedOrigins: [SHOP] });
  programB = await programWithPublishableKey({ allowedOrigins: [SHOP] });
  for (const [program, email, link] of [
    [programA, 'ada@example.com', 'ada'],
    [programB, 'bob@example.com', 'bob'],
  ] as const) {
    const created = await request(gateway.url)
      .post('/api/v1/affiliates')
      .set(bearer(program.key))
      .send({ firstName: 'A', lastName: 'B', email, affiliateLink: link });
    expect(created.status).toBe(200);
  }
});

afterAll(async () => {
  await gateway.stop();
  await echo.stop();
  await referral.stop();
  await affiliate.stop();
});

const browser = (key: string, origin: string | null = SHOP) => {
  const withOrigin = (test: request.Test) => (origin ? test.set('origin', origin) : test);
  return {
    click: (body: object) =>
      withOrigin(
        request(gateway.url)
          .post('/api/v1/browser/clicks')
          .set(bearer(key))
          .set('user-agent', 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0')
          .send(body),
      ),
    referral: (body: object) => withOrigin(request(gateway.url).post('/api/v1/browser/referrals').set(bearer(key)).send(body)),
  };
};

const clicksOf = async (program: ProgramWithKey, link: string): Promise<number> => {
  const links = await request(gateway.url).get(`/api/v1/links?link=${link}`).set(bearer(program.key)).expect(200);
  return links.body[0].clicks as number;
};

test('a publishable key is created, listed and revoked by the operator and by the program itself, and a revoked one is refused', async () => {
  const program = await createProgramWithKey(gateway, { allowedOrigins: [SHOP] });
  const byOperator = await request(gateway.url).post(`/admin/v1/programs/${program.programId}/publishable-keys`).set(adminAuth).expect(200);
  expect(byOperator.body).toEqual({
    id: expect.any(String),
    programId: program.programId,
    key: expect.stringMatching(/^pk_live_[A-Za-z0-9_-]{32}$/),
    createdAt: expect.any(String),
    revokedAt: null,
  });
  const byProgram = await request(gateway.url).post('/api/v1/publishable-keys').set(bearer(program.key)).expect(200);
  const listed = await request(gateway.url).get('/api/v1/publishable-keys').set(bearer(program.key)).expect(200);
  expect(listed.body.map((key: { id: string }) => key.id).sort()).toEqual([byOperator.body.id, byProgram.body.id].sort());
  const adminListed = await request(gateway.url).get(`/admin/v1/programs/${program.programId}/publishable-keys`).set(adminAuth).expect(200);
  expect(adminListed.body).toHaveLength(2);

  // Another program cannot revoke it; its own program can.
  await request(gateway.url)
    .delete('/api/v1/publishable-keys')
    .set(bearer(programB.key))
    .send({ publishableKeyId: byProgram.body.id })
    .expect(404);
  await request(gateway.url)
    .delete('/api/v1/publishable-keys')
    .set(bearer(program.key))
    .send({ publishableKeyId: byProgram.body.id })
    .expect(200, { id: byProgram.body.id, revoked: true });
  await request(gateway.url).delete(`/admin/v1/publishable-keys/${byOperator.body.id}`).set(adminAuth).expect(200);
  await eventually(async () => {
    const refused = await browser(byOperator.body.key).click({ link: 'ada' });
    expect(refused.status).toBe(401);
  });
});

test('a publishable key reaches only the two browser routes: every other public route answers 403 and nothing reaches a service', async () => {
  const before = echo.received.length;
  const secretRoutes = API_OPERATIONS.filter((operation) => !operation.admin && !operation.browser);
  expect(secretRoutes.length).toBeGreaterThan(40);
  for (const operation of secretRoutes) {
    const method = operation.method as 'get' | 'post' | 'put' | 'delete';
    const response = await request(gateway.url)
      [method](`/api/v1${operation.path}`)
      .set(bearer(programA.publishableKey))
      .set('origin', SHOP)
      .send(operation.method === 'get' ? undefined : {});
    expect({ route: `${operation.method} ${operation.path}`, status: response.status }).toEqual({
      route: `${operation.method} ${operation.path}`,
      status: 403,
    });
    // DELETE /coupons and PUT /referrals number their errors (spec): the text is then in `message`.
    // The console's team routes refuse every API key alike: they take a member's session (issue 32).
    if (operation.team) expect(response.body.code).toBe('team_session_required');
    else expect(response.body.message ?? response.body.error).toMatch(/^A publishable key can only record clicks/);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  }
  // A GET of a browser route is not one of its two calls either, nor is an unknown path.
  await browser(programA.publishableKey).click({ link: 'ada' }).expect(200);
  await request(gateway.url).get('/api/v1/browser/clicks').set(bearer(programA.publishableKey)).set('origin', SHOP).expect(403);
  await request(gateway.url).post('/api/v1/nowhere').set(bearer(programA.publishableKey)).set('origin', SHOP).send({}).expect(403);
  expect(echo.received.slice(before).filter((received) => received.url !== '/healthz')).toEqual([]);
});

test('a publishable key opens no admin route', async () => {
  // Its own gateway on the same database: wrong admin credentials lock an address out after ten, and there are more routes than that.
  const admin = await startGateway({
    mongoUrl: gateway.settings.mongoUrl,
    dbName: gateway.settings.dbName,
    failedAuthLimits: { api: { points: 1000, duration: 60 }, admin: { points: 1000, duration: 60 } },
  });
  try {
    for (const operation of API_OPERATIONS.filter((candidate) => candidate.admin)) {
      const path = `/admin/v1${operation.path.replace('{id}', programA.programId)}`;
      const response = await request(admin.url)
        [operation.method as 'get' | 'post' | 'put' | 'delete'](path)
        .set(bearer(programA.publishableKey));
      expect({ route: `${operation.method} ${path}`, status: response.status }).toEqual({
        route: `${operation.method} ${path}`,
        status: 401,
      });
    }
  } finally {
    await admin.stop();
  }
});

test('a secret API key is refused on the browser routes', async () => {
  const response = await request(gateway.url)
    .post('/api/v1/browser/clicks')
    .set(bearer(programA.key))
    .set('origin', SHOP)
    .send({ link: 'ada' })
    .expect(403);
  expect(response.body.error).toMatch(/a secret API key must never be sent from a web page/);
});

test('a browser call from an origin outside allowedOrigins, or with no origin, is refused with 403 and no CORS answer, and counts nothing', async () => {
  const before = await clicksOf(programA, 'ada');
  const foreign = await browser(programA.publishableKey, 'https://evil.example')
    .click({ link: 'ada', visitorId: 'visitor-foreign-1' })
    .expect(403);
  expect(foreign.body.error).toMatch(/The origin https:\/\/evil.example is not allowed/);
  expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  const none = await browser(programA.publishableKey, null).click({ link: 'ada', visitorId: 'visitor-foreign-2' }).expect(403);
  expect(none.body.error).toMatch(/Origin header/);
  expect(await clicksOf(programA, 'ada')).toBe(before);
});

test('an allowed origin gets a CORS answer: the preflight, and the call itself', async () => {
  const preflight = await request(gateway.url)
    .options('/api/v1/browser/clicks')
    .set('origin', SHOP)
    .set('access-control-request-method', 'POST')
    .set('access-control-request-headers', 'authorization, content-type')
    .expect(204);
  expect(preflight.headers).toMatchObject({
    'access-control-allow-origin': SHOP,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'authorization, content-type',
  });
  const click = await browser(programA.publishableKey).click({ link: 'ada', visitorId: 'visitor-cors-1' }).expect(200);
  expect(click.headers['access-control-allow-origin']).toBe(SHOP);
  expect(click.headers.vary).toMatch(/Origin/);
  // An origin no program allows gets no CORS answer, even to a preflight.
  const foreign = await request(gateway.url)
    .options('/api/v1/browser/clicks')
    .set('origin', 'https://evil.example')
    .set('access-control-request-method', 'POST');
  expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  // No other route answers a preflight.
  const other = await request(gateway.url).options('/api/v1/coupons').set('origin', SHOP).set('access-control-request-method', 'POST');
  expect(other.headers['access-control-allow-origin']).toBeUndefined();
});

test('a browser click answers whether it counted and the attribution window, never the affiliate', async () => {
  const click = await browser(programA.publishableKey)
    .click({ link: 'ada', visitorId: 'visitor-answer-1', landingUrl: `${SHOP}/?ref=ada` })
    .expect(200);
  expect(click.body).toEqual({
    clickId: expect.any(Number),
    counted: true,
    reason: null,
    attributionWindowDays: null,
    attributionModel: 'FIRST_CLICK',
  });
});

test("a browser click is judged by the request's own address and user agent: a page cannot send its own", async () => {
  const spoofed = await browser(programA.publishableKey)
    .click({ link: 'ada', ipAddress: '203.0.113.9', userAgent: 'Googlebot' })
    .expect(400);
  expect(spoofed.body.error).toMatch(/ipAddress/);
  const before = echo.received.length;
  const program = await programWithPublishableKey({ allowedOrigins: [SHOP] });
  const echoed = await startGateway({
    upstreams: { coupon: echo.url, affiliate: echo.url, referral: echo.url, sale: echo.url, 'webhook-dispatcher': echo.url },
    mongoUrl: gateway.settings.mongoUrl,
    dbName: gateway.settings.dbName,
  });
  try {
    await request(echoed.url)
      .post('/api/v1/browser/clicks')
      .set(bearer(program.publishableKey))
      .set('origin', SHOP)
      .set('user-agent', 'Mozilla/5.0 Test')
      .send({ link: 'ada', visitorId: 'visitor-body-1' });
    const forwarded = echo.received.slice(before).find((received) => received.url === '/clicks');
    expect(JSON.parse(forwarded?.body ?? '{}')).toEqual({
      link: 'ada',
      visitorId: 'visitor-body-1',
      ipAddress: '127.0.0.1',
      userAgent: 'Mozilla/5.0 Test',
    });
    expect(forwarded?.headers['x-program-id']).toBe(program.programId);
  } finally {
    await echoed.stop();
  }
});

test('a browser referral is created from a click and answers only ok and the referral id', async () => {
  const click = await browser(programA.publishableKey).click({ link: 'ada', visitorId: 'visitor-referral-1' }).expect(200);
  const created = await browser(programA.publishableKey)
    .referral({ clickId: click.body.clickId, email: 'customer@example.com', name: 'Cus Tomer', externalId: 'user-42' })
    .expect(200);
  expect(created.body).toEqual({ ok: true, referralId: expect.any(String) });
  const stored = await request(gateway.url).get(`/api/v1/referrals?id=${created.body.referralId}`).set(bearer(programA.key)).expect(200);
  expect(stored.body).toMatchObject({ email: 'customer@example.com', clickId: click.body.clickId, referredUserExternalId: 'user-42' });
  // Only from a click or a visitor: naming an affiliate or a link is for backends.
  const byLink = await browser(programA.publishableKey).referral({ link: 'ada', email: 'other@example.com' }).expect(400);
  expect(byLink.body.error).toMatch(/link/);
});

test('a browser referral that the service refuses gets one generic refusal: a page cannot learn which emails are referrals or which clicks exist', async () => {
  const click = await browser(programA.publishableKey).click({ link: 'ada', visitorId: 'visitor-generic-1' }).expect(200);
  await browser(programA.publishableKey).referral({ clickId: click.body.clickId, email: 'known@example.com' }).expect(200);
  const answers = await Promise.all([
    browser(programA.publishableKey).referral({ clickId: 999_999, email: 'known@example.com' }),
    browser(programA.publishableKey).referral({ clickId: 999_999, email: 'unknown@example.com' }),
    browser(programA.publishableKey).referral({ clickId: click.body.clickId, email: 'known@example.com' }),
    browser(programA.publishableKey).referral({ visitorId: 'visitor-never-seen', email: 'unknown@example.com' }),
  ]);
  expect(answers.map((answer) => [answer.status, answer.body.error])).toEqual(
    Array(4).fill([400, expect.stringMatching(/^The referral could not be created/)]),
  );
});

test('a program with no allowed origin has no browser access', async () => {
  const program = await programWithPublishableKey({});
  const refused = await browser(program.publishableKey).click({ link: 'ada' }).expect(403);
  expect(refused.body.error).toMatch(/not allowed to use this program's publishable keys/);
});

test('a program has at most 10 active publishable keys, a clear 400 beyond', async () => {
  const program = await createProgramWithKey(gateway, { allowedOrigins: [SHOP] });
  const created = [];
  for (let index = 0; index < 10; index += 1)
    created.push((await request(gateway.url).post('/api/v1/publishable-keys').set(bearer(program.key)).expect(200)).body);
  const refused = await request(gateway.url).post('/api/v1/publishable-keys').set(bearer(program.key)).expect(400);
  expect(refused.body.error).toMatch(/at most 10 active publishable keys/);
  await request(gateway.url)
    .delete('/api/v1/publishable-keys')
    .set(bearer(program.key))
    .send({ publishableKeyId: created[0].id })
    .expect(200);
  await request(gateway.url).post('/api/v1/publishable-keys').set(bearer(program.key)).expect(200);
});

test("the visitor's address is taken from X-Forwarded-For only behind a trusted proxy", async () => {
  const program = await programWithPublishableKey({ allowedOrigins: [SHOP] });
  const forwardedAddressOf = async (trustProxy: GatewaySettings['trustProxy']) => {
    const proxied = await startGateway({
      upstreams: { coupon: echo.url, affiliate: echo.url, referral: echo.url, sale: echo.url, 'webhook-dispatcher': echo.url },
      mongoUrl: gateway.settings.mongoUrl,
      dbName: gateway.settings.dbName,
      trustProxy,
    });
    try {
      const before = echo.received.length;
      await request(proxied.url)
        .post('/api/v1/browser/clicks')
        .set(bearer(program.publishableKey))
        .set('origin', SHOP)
        .set('x-forwarded-for', '203.0.113.7')
        .send({ link: 'ada' });
      return JSON.parse(echo.received.slice(before).find((received) => received.url === '/clicks')?.body ?? '{}').ipAddress;
    } finally {
      await proxied.stop();
    }
  };
  // The test's requests come from loopback: trusted as a proxy, its X-Forwarded-For names the visitor.
  expect(await forwardedAddressOf('127.0.0.1/8')).toBe('203.0.113.7');
  // Not trusted: the header is anyone's to write, and the socket's address counts.
  expect(await forwardedAddressOf(false)).toBe('127.0.0.1');
});

test("a publishable key of program A never reaches program B's links or referrals", async () => {
  const before = await clicksOf(programB, 'bob');
  const refused = await browser(programA.publishableKey).click({ link: 'bob', visitorId: 'visitor-cross-1' }).expect(400);
  expect(refused.body.error).toMatch(/no referral link "bob"/);
  expect(await clicksOf(programB, 'bob')).toBe(before);
  // Click ids count per program: B's click id names, for A's key, A's own click of that number if any, never B's.
  const clickOfB = await browser(programB.publishableKey).click({ link: 'bob', visitorId: 'visitor-cross-2' }).expect(200);
  const made = await browser(programA.publishableKey).referral({ clickId: clickOfB.body.clickId, email: 'cross@example.com' });
  if (made.status === 200) {
    // A has a click of that number: the referral is A's, credited to A's affiliate.
    const seenByA = await request(gateway.url).get(`/api/v1/referrals?id=${made.body.referralId}`).set(bearer(programA.key)).expect(200);
    const ada = await request(gateway.url).get('/api/v1/affiliates?email=ada@example.com').set(bearer(programA.key)).expect(200);
    expect(seenByA.body.affiliateId).toBe(ada.body.id);
    await request(gateway.url).get(`/api/v1/referrals?id=${made.body.referralId}`).set(bearer(programB.key)).expect(404);
  } else {
    expect(made.status).toBe(400);
  }
  expect(await clicksOf(programB, 'bob')).toBe(before + 1);
  expect((await request(gateway.url).get('/api/v1/referrals?email=cross@example.com').set(bearer(programB.key)).expect(200)).body).toEqual(
    [],
  );
});

test('browser calls are rate limited per publishable key and client address', async () => {
  const program = await programWithPublishableKey({ allowedOrigins: [SHOP] });
  const limited = await startGateway({
    upstreams: { coupon: echo.url, affiliate: echo.url, referral: echo.url, sale: echo.url, 'webhook-dispatcher': echo.url },
    mongoUrl: gateway.settings.mongoUrl,
    dbName: gateway.settings.dbName,
    browserAddressRateLimit: { points: 3, duration: 60 },
  });
  try {
    const statuses: number[] = [];
    for (let call = 0; call < 4; call += 1) {
      statuses.push(
        (
          await request(limited.url)
            .post('/api/v1/browser/clicks')
            .set(bearer(program.publishableKey))
            .set('origin', SHOP)
            .send({ link: 'ada' })
        ).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  } finally {
    await limited.stop();
  }
});

test('a program reads and changes its own settings with its API key, but not its rate limit or API access', async () => {
  const program = await createProgramWithKey(gateway);
  const own = await request(gateway.url).get('/api/v1/program').set(bearer(program.key)).expect(200);
  expect(own.body).toMatchObject({
    id: program.programId,
    allowedOrigins: [],
    attributionWindowDays: null,
    attributionModel: 'FIRST_CLICK',
    clickDedupSeconds: 3600,
  });
  const changed = await request(gateway.url)
    .put('/api/v1/program')
    .set(bearer(program.key))
    .send({
      name: 'Renamed',
      allowedOrigins: [SHOP, 'http://localhost:3000'],
      attributionWindowDays: 30,
      attributionModel: 'LAST_CLICK',
      clickDedupSeconds: 0,
    })
    .expect(200);
  expect(changed.body).toMatchObject({
    name: 'Renamed',
    allowedOrigins: [SHOP, 'http://localhost:3000'],
    attributionWindowDays: 30,
    attributionModel: 'LAST_CLICK',
    clickDedupSeconds: 0,
  });
  const byOperator = await request(gateway.url).get(`/admin/v1/programs/${program.programId}`).set(adminAuth).expect(200);
  expect(byOperator.body).toEqual(changed.body);

  for (const [field, value] of [
    ['rateLimit', { points: 100000, duration: 1 }],
    ['apiAccess', false],
  ] as const) {
    const refused = await request(gateway.url)
      .put('/api/v1/program')
      .set(bearer(program.key))
      .send({ [field]: value })
      .expect(400);
    expect(refused.body.error).toMatch(new RegExp(field));
  }
  const badOrigin = await request(gateway.url)
    .put('/api/v1/program')
    .set(bearer(program.key))
    .send({ allowedOrigins: ['https://shop.example.com/path'] })
    .expect(400);
  expect(badOrigin.body.error).toMatch(/allowedOrigins/);
  await request(gateway.url).put('/api/v1/program').set(bearer(program.key)).send({ attributionWindowDays: 366 }).expect(400);
  expect((await request(gateway.url).get('/api/v1/program').set(bearer(program.key)).expect(200)).body).toEqual(changed.body);
});

test('a program sets its reporting currency (default USD, an ISO 4217 code, lower case stored upper case)', async () => {
  const program = await createProgramWithKey(gateway);
  expect((await request(gateway.url).get('/api/v1/program').set(bearer(program.key)).expect(200)).body.reportingCurrency).toBe('USD');
  const changed = await request(gateway.url).put('/api/v1/program').set(bearer(program.key)).send({ reportingCurrency: 'eur' }).expect(200);
  expect(changed.body.reportingCurrency).toBe('EUR');
  const refused = await request(gateway.url).put('/api/v1/program').set(bearer(program.key)).send({ reportingCurrency: 'XYZ' }).expect(400);
  expect(refused.body.error).toMatch(/^reportingCurrency: must be an active ISO 4217 currency code/);
  expect((await request(gateway.url).get('/api/v1/program').set(bearer(program.key)).expect(200)).body.reportingCurrency).toBe('EUR');
});
