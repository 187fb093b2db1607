import { PUBLIC_EVENT_TYPES } from '@affiliate/contracts';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { gatewaySettingsFromEnv } from '../src/config';
import type { RunningGateway } from '../src/gateway';
import { allUpstreams, bearer, createProgramWithKey, startEchoUpstream, startGateway, type EchoUpstream } from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url) });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

test('GET /healthz answers while the process lives', async () => {
  await request(gateway.url).get('/healthz').expect(200, { status: 'ok' });
});

test('GET /readyz checks that the process serves and its own database, never an upstream', async () => {
  const response = await request(gateway.url).get('/readyz').expect(200);
  expect(response.body).toEqual({ status: 'ready', checks: { accepting: true, mongo: true } });
});

test('GET /metrics, on its own listener, counts requests and their latency by route and status', async () => {
  const { key } = await createProgramWithKey(gateway);
  await request(gateway.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
  await request(gateway.url).get('/api/v1/coupons').expect(401);
  const metrics = await request(gateway.metricsUrl).get('/metrics').expect(200);
  expect(metrics.text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/coupons",status="200",service="gateway"\} 1/);
  expect(metrics.text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/coupons",status="401",service="gateway"\} 1/);
  const latency = metrics.text
    .split('\n')
    .find(
      (line) =>
        line.startsWith('http_request_duration_seconds_count') && line.includes('route="/api/v1/coupons"') && line.includes('status="200"'),
    );
  expect(latency).toMatch(/ 1$/);
});

test('the public port does not serve /metrics', async () => {
  await request(gateway.url).get('/metrics').expect(404);
});

test('both listeners are on loopback unless HOST says otherwise', () => {
  expect(gatewaySettingsFromEnv({}).host).toBe('127.0.0.1');
  expect((gateway.server.address() as AddressInfo).address).toBe('127.0.0.1');
});

test('metric labels are route templates only: made-up paths, authenticated or not, share one series', async () => {
  const { key } = await createProgramWithKey(gateway);
  await request(gateway.url).get('/api/v1/made-up-1').expect(401);
  await request(gateway.url).get('/api/v1/coupons/made-up-2').set(bearer(key)).expect(200);
  await request(gateway.url).get('/admin/v1/made-up-3').expect(401);
  await request(gateway.url).get('/made-up-4').expect(404);
  const after = await request(gateway.metricsUrl).get('/metrics').expect(200);
  expect(after.text).not.toContain('made-up');
  expect(after.text).toContain('route="/api/v1/unmatched"');
  expect(after.text).toContain('route="unmatched"');
});

test('GET /api/v1/openapi.json is generated from the contracts, with the admin API, webhook endpoints and webhook events', async () => {
  const response = await request(gateway.url)
    .get('/api/v1/openapi.json')
    .expect(200)
    .expect('content-type', /application\/json/);
  const document = response.body;
  expect(document.openapi).toBe('3.1.0');
  for (const path of [
    '/api/v1/coupons',
    '/api/v1/promotional-codes',
    '/api/v1/affiliates',
    '/api/v1/links',
    '/api/v1/referrals',
    '/api/v1/sales',
    '/api/v1/webhook-endpoints',
    '/api/v1/webhook-deliveries',
    '/admin/v1/programs',
    '/admin/v1/programs/{id}',
    '/admin/v1/programs/{id}/api-keys',
    '/admin/v1/api-keys/{id}',
  ]) {
    expect(Object.keys(document.paths)).toContain(path);
  }
  expect(document.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
  expect(Object.keys(document.webhooks).sort()).toEqual([...PUBLIC_EVENT_TYPES].sort());
  expect(document.components.schemas.WebhookPayload).toBeDefined();
  expect(document.paths['/api/v1/coupons'].post.responses['429']).toBeDefined();
});

test('the docs page at /docs renders the document with Swagger UI served by the gateway itself (no CDN)', async () => {
  const page = await request(gateway.url)
    .get('/docs')
    .expect(200)
    .expect('content-type', /text\/html/);
  const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
  expect(sources.length).toBeGreaterThan(2);
  for (const source of sources) {
    expect(source.startsWith('/')).toBe(true);
    await request(gateway.url).get(source).expect(200);
  }
  expect(page.headers['content-security-policy']).toContain("default-src 'self'");
  const init = await request(gateway.url).get('/docs/init.js').expect(200);
  expect(init.text).toContain("url: '/api/v1/openapi.json'");
  expect(init.text).toContain('validatorUrl: null');
  const bundle = await request(gateway.url)
    .get('/docs/assets/swagger-ui-bundle.js')
    .expect(200)
    .expect('content-type', /javascript/);
  expect(bundle.text.length).toBeGreaterThan(100_000);
});

test("the docs serve only the assets their page uses: never swagger-ui's stock index.html or oauth2-redirect.html, and every docs answer forbids framing", async () => {
  for (const stock of ['index.html', 'oauth2-redirect.html', 'oauth2-redirect.js', 'swagger-initializer.js', 'index.js', '']) {
    await request(gateway.url).get(`/docs/assets/${stock}`).expect(404);
  }
  for (const path of ['/docs', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']) {
    const answer = await request(gateway.url).get(path).expect(200);
    expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  }
});

test('unknown paths outside the API are 404 {error}', async () => {
  const response = await request(gateway.url).get('/nothing').expect(404);
  expect(response.body).toMatchObject({ error: 'No route for GET /nothing' });
});
