import type { RunningService } from '@affiliate/platform';
import { testServiceSettings, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import { bootDispatcher, testDispatcherSettings } from '../../services/webhook-dispatcher/test/support/dispatcher';
import type { RunningGateway } from '../src/gateway';
import { adminAuth, allUpstreams, bearer, createProgramWithKey, startGateway } from './support';

let dispatcher: RunningService;
let gateway: RunningGateway;

beforeAll(async () => {
  const exchange = uniqueName('test_events');
  dispatcher = await bootDispatcher(testDispatcherSettings(), testServiceSettings('webhook-dispatcher', { exchange }));
  gateway = await startGateway({ exchange, upstreams: allUpstreams(dispatcher.url), keyCacheTtlMs: 0 });
});

afterAll(async () => {
  await gateway.stop();
  await dispatcher.stop();
});

const endpoint = { url: 'http://127.0.0.1:9/hooks', eventTypes: ['sale.created'] };

test("the operator's maxWebhookEndpoints caps a program's endpoints through the gateway, with a 400 naming the limit; the program cannot raise it itself", async () => {
  const { programId, key } = await createProgramWithKey(gateway);
  await request(gateway.url).put(`/admin/v1/programs/${programId}`).set(adminAuth).send({ maxWebhookEndpoints: 2 }).expect(200);
  for (let index = 0; index < 2; index += 1)
    await request(gateway.url).post('/api/v1/webhook-endpoints').set(bearer(key)).send(endpoint).expect(200);
  const refused = await request(gateway.url).post('/api/v1/webhook-endpoints').set(bearer(key)).send(endpoint).expect(400);
  expect(refused.body.error).toMatch(/limit of 2 webhook endpoints \(maxWebhookEndpoints\)/);

  const raised = await request(gateway.url).put('/api/v1/program').set(bearer(key)).send({ maxWebhookEndpoints: 100 }).expect(400);
  expect(raised.body.error).toMatch(/maxWebhookEndpoints/);
  await request(gateway.url)
    .get('/api/v1/program')
    .set(bearer(key))
    .expect(200)
    .expect((response) => expect(response.body.maxWebhookEndpoints).toBe(2));

  await request(gateway.url).put(`/admin/v1/programs/${programId}`).set(adminAuth).send({ maxWebhookEndpoints: 3 }).expect(200);
  await request(gateway.url).post('/api/v1/webhook-endpoints').set(bearer(key)).send(endpoint).expect(200);
});

test('without an operator setting a program has at most 20 webhook endpoints', async () => {
  const { key } = await createProgramWithKey(gateway);
  for (let index = 0; index < 20; index += 1)
    await request(gateway.url).post('/api/v1/webhook-endpoints').set(bearer(key)).send(endpoint).expect(200);
  const refused = await request(gateway.url).post('/api/v1/webhook-endpoints').set(bearer(key)).send(endpoint).expect(400);
  expect(refused.body.error).toMatch(/limit of 20 webhook endpoints/);
});

test('the endpoint cap an operator can set is bounded (1 to 100), so one event fans out to at most 100 deliveries', async () => {
  for (const maxWebhookEndpoints of [0, 101, 2.5, '20']) {
    const refused = await request(gateway.url)
      .post('/admin/v1/programs')
      .set(adminAuth)
      .send({ name: 'Capped', maxWebhookEndpoints })
      .expect(400);
    expect(refused.body.error).toMatch(/maxWebhookEndpoints/);
  }
});
