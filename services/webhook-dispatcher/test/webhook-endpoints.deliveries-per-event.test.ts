import { randomBytes, randomUUID } from 'node:crypto';
import { parseConfig, type RunningService } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId } from '@affiliate/platform/testing';
import request from 'supertest';
import { dispatcherConfigShape, dispatcherSettings } from '../src/config';
import { bootDispatcher, createEndpoint, deliveriesOf, eventPublisher, testDispatcherSettings } from './support/dispatcher';

/**
 * Deliveries per event (issue 27): one event of a program reaches at most WEBHOOK_MAX_DELIVERIES_PER_EVENT
 * of its active endpoints, here 3. A subscription that would pass it is refused with a 400 naming
 * the limit; fan-out holds it even when endpoints beyond it exist (two changes at once).
 */
const LIMIT = 3;
let service: RunningService;
let publisher: ReturnType<typeof eventPublisher>;
const url = 'http://127.0.0.1:9/webhooks';

beforeAll(async () => {
  service = await bootDispatcher(testDispatcherSettings({ maxDeliveriesPerEvent: LIMIT }));
  publisher = eventPublisher(service);
});
afterAll(async () => {
  await publisher.close();
  await service.stop();
});

const api = () => request(service.server);
const endpoints = () => service.context.connection.collection('webhook_endpoints');
const beyondLimit = new RegExp(`limit of ${LIMIT} deliveries per event \\(WEBHOOK_MAX_DELIVERIES_PER_EVENT\\)`);

test('a subscription that would send one event to more active endpoints than the deliveries per event is a 400 naming the limit, and changes nothing', async () => {
  const programId = newProgramId();
  const headers = internalHeaders(programId);
  // sale.created reaches all three (its type, its family, everything); coupon.created the last one only.
  await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  await createEndpoint(service, programId, { url, eventTypes: ['sale.*'] });
  await createEndpoint(service, programId, { url, eventTypes: ['*'] });

  const created = await api()
    .post('/webhook-endpoints')
    .set(headers)
    .send({ url, eventTypes: ['coupon.created', 'sale.created'] })
    .expect(400);
  expect(created.body.error).toMatch(beyondLimit);
  expect(created.body.error).toContain('sale.created');
  const couponOnly = await createEndpoint(service, programId, { url, eventTypes: ['coupon.created'] });

  // Widening a subscription, or turning a disabled endpoint back on, is judged the same way.
  const widened = await api()
    .put('/webhook-endpoints')
    .set(headers)
    .send({ webhookEndpointId: couponOnly.id, eventTypes: ['sale.created'] })
    .expect(400);
  expect(widened.body.error).toMatch(beyondLimit);
  const disabled = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'], active: false });
  const enabled = await api().put('/webhook-endpoints').set(headers).send({ webhookEndpointId: disabled.id, active: true }).expect(400);
  expect(enabled.body.error).toMatch(beyondLimit);

  const listed = await api().get('/webhook-endpoints').set(headers).expect(200);
  expect(listed.body).toHaveLength(5);
  expect(listed.body.find((endpoint: { id: string }) => endpoint.id === couponOnly.id).eventTypes).toEqual(['coupon.created']);
  expect(listed.body.find((endpoint: { id: string }) => endpoint.id === disabled.id).active).toBe(false);
  // Another program's endpoints are counted apart.
  await createEndpoint(service, newProgramId(), { url, eventTypes: ['sale.created'] });
});

test('an event fans out to at most the deliveries per event, even when more active endpoints subscribe to it', async () => {
  const programId = newProgramId();
  // As two subscriptions made at once could leave them: five active endpoints taking every event.
  const now = Date.now();
  const stored = Array.from({ length: 5 }, (_, index) => ({
    _id: randomUUID(),
    programId,
    url,
    eventTypes: ['*'],
    description: null,
    active: true,
    disabledReason: null,
    secret: `whsec_${randomBytes(24).toString('base64')}`,
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    createdAt: new Date(now + index),
    updatedAt: new Date(now + index),
  }));
  await endpoints().insertMany(stored as never[]);

  const event = await publisher.publish('coupon.created', programId);
  // First attempts start once the event's fan-out is over: every delivery it makes exists by then.
  const deliveries = await eventually(async () => {
    const found = await deliveriesOf(service, programId, { eventId: event.id });
    expect(found.some((delivery) => delivery.attempts.length > 0)).toBe(true);
    return found;
  }, 30_000);
  expect(deliveries).toHaveLength(LIMIT);
});

test('WEBHOOK_MAX_DELIVERIES_PER_EVENT defaults to 20 (the default endpoint cap) and is at most the highest endpoint cap, 100', () => {
  expect(dispatcherSettings(parseConfig(dispatcherConfigShape, {})).maxDeliveriesPerEvent).toBe(20);
  expect(dispatcherSettings(parseConfig(dispatcherConfigShape, { WEBHOOK_MAX_DELIVERIES_PER_EVENT: '100' })).maxDeliveriesPerEvent).toBe(
    100,
  );
  for (const bad of ['0', '101', '2.5', 'many']) {
    expect(() => parseConfig(dispatcherConfigShape, { WEBHOOK_MAX_DELIVERIES_PER_EVENT: bad })).toThrow(/WEBHOOK_MAX_DELIVERIES_PER_EVENT/);
  }
});
