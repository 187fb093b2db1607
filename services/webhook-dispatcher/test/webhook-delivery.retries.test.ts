import type { RunningService } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId } from '@affiliate/platform/testing';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import {
  bootDispatcher,
  createEndpoint,
  deliveriesOf,
  deliveryReaching,
  eventPublisher,
  testDispatcherSettings,
} from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

let service: RunningService;
let publisher: ReturnType<typeof eventPublisher>;
const subscribers: Subscriber[] = [];
const programId = newProgramId();

beforeAll(async () => {
  service = await bootDispatcher(testDispatcherSettings({ retryScheduleMs: [0, 200, 200] }));
  publisher = eventPublisher(service);
});
afterAll(async () => {
  await publisher.close();
  await service.stop();
  await Promise.all(subscribers.map((subscriber) => subscriber.close()));
});

const api = () => request(service.server);
async function subscriberAnswering(...args: Parameters<typeof startSubscriber>): Promise<Subscriber> {
  const subscriber = await startSubscriber(...args);
  subscribers.push(subscriber);
  return subscriber;
}

test('a subscriber that fails twice then succeeds gets the event on the third attempt, with the same webhook-id and bytes', async () => {
  const subscriber = await subscriberAnswering((_webhook, index) =>
    index < 2 ? { status: 500, body: `failure ${index + 1}` } : { status: 204 },
  );
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['sale.created'] });
  const event = await publisher.publish('sale.created', programId, { id: crypto.randomUUID(), totalEarned: 99 });

  const delivery = await deliveryReaching(service, programId, { eventId: event.id }, 'succeeded');
  expect(subscriber.received).toHaveLength(3);
  expect(new Set(subscriber.received.map((webhook) => webhook.headers['webhook-id']))).toEqual(new Set([event.id]));
  expect(new Set(subscriber.received.map((webhook) => webhook.body)).size).toBe(1);
  for (const webhook of subscriber.received) {
    expect(() => new Webhook(endpoint.secret).verify(webhook.body, webhook.headers as Record<string, string>)).not.toThrow();
  }
  expect(delivery.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 500, 204]);
  expect(delivery.attempts[0]).toMatchObject({ responseExcerpt: 'failure 1', error: null });
  expect(delivery.nextAttemptAt).toBeNull();
});

test('the delivery log lists deliveries by endpoint, event, event type and status, each with its attempts', async () => {
  // A program of its own: its endpoint takes coupon.deleted, which later tests publish too.
  const programId = newProgramId();
  const subscriber = await subscriberAnswering(() => ({ status: 500 }));
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['coupon.created', 'coupon.deleted'] });
  const event = await publisher.publish('coupon.created', programId);
  const other = await publisher.publish('coupon.deleted', programId);

  const failed = await deliveryReaching(service, programId, { endpointId: endpoint.id, eventId: event.id }, 'failed');
  expect(failed.attempts).toHaveLength(3);
  for (const attempt of failed.attempts) {
    expect(attempt).toMatchObject({ statusCode: 500, responseExcerpt: 'ok', error: null });
    expect(typeof attempt.latencyMs).toBe('number');
  }
  await deliveryReaching(service, programId, { eventId: other.id }, 'failed');
  expect(await deliveriesOf(service, programId, { endpointId: endpoint.id, status: 'failed' })).toHaveLength(2);
  expect(
    (await deliveriesOf(service, programId, { endpointId: endpoint.id, eventType: 'coupon.deleted' })).map((delivery) => delivery.id),
  ).toHaveLength(1);
  expect(await deliveriesOf(service, programId, { eventId: other.id, eventType: 'coupon.created' })).toEqual([]);
  expect(await deliveriesOf(service, programId, { endpointId: endpoint.id, status: 'succeeded' })).toEqual([]);
  expect(await deliveriesOf(service, programId, { eventId: event.id })).toHaveLength(1);
  expect(await deliveriesOf(service, newProgramId(), { eventId: event.id })).toEqual([]);
});

test('responses are kept up to 50 KB and redirects are not followed', async () => {
  const subscriber = await subscriberAnswering((webhook) =>
    webhook.path === '/moved' ? { status: 200 } : { status: 302, headers: { location: '/moved' }, body: 'x'.repeat(200_000) },
  );
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['promocode.updated'] });
  await publisher.publish('promocode.updated', programId);
  const failed = await deliveryReaching(service, programId, { endpointId: endpoint.id }, 'failed');
  expect(failed.attempts.map((attempt) => attempt.statusCode)).toEqual([302, 302, 302]);
  expect(failed.attempts[0]?.responseExcerpt).toHaveLength(50 * 1024);
  expect(subscriber.received.map((webhook) => webhook.path)).toEqual(['/webhooks', '/webhooks', '/webhooks']);
});

test('a Retry-After on 503 is honoured', async () => {
  const subscriber = await subscriberAnswering((_webhook, index) =>
    index === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 },
  );
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['referral.updated'] });
  await publisher.publish('referral.updated', programId);
  const waiting = await eventually(async () => {
    const [delivery] = await deliveriesOf(service, programId, { endpointId: endpoint.id });
    expect(delivery?.attempts).toHaveLength(1);
    return delivery as NonNullable<typeof delivery>;
  });
  const firstAttemptAt = Date.parse(waiting.attempts[0]?.at as string);
  expect(Date.parse(waiting.nextAttemptAt as string) - firstAttemptAt).toBeGreaterThanOrEqual(2000);
  await deliveryReaching(service, programId, { endpointId: endpoint.id }, 'succeeded');
});

test('410 Gone disables the endpoint, which receives nothing further', async () => {
  const subscriber = await subscriberAnswering(() => ({ status: 410 }));
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['affiliate.deleted'] });
  await publisher.publish('affiliate.deleted', programId);
  const failed = await deliveryReaching(service, programId, { endpointId: endpoint.id }, 'failed');
  expect(failed.attempts).toHaveLength(1);
  // The attempt is logged first, then the endpoint disabled: two documents, so a reader may see them apart.
  await eventually(async () => {
    const disabled = await api().get('/webhook-endpoints').query({ id: endpoint.id }).set(internalHeaders(programId)).expect(200);
    expect(disabled.body).toMatchObject({ active: false, disabledReason: expect.stringMatching(/410/) });
  });

  const later = await publisher.publish('affiliate.deleted', programId);
  await eventually(async () => {
    const claim = await service.context.connection
      .collection('processed_events')
      .findOne({ _id: `webhook-dispatcher:${later.id}` as never });
    expect(claim?.state).toBe('done');
  });
  expect(await deliveriesOf(service, programId, { eventId: later.id })).toEqual([]);
  expect(subscriber.received).toHaveLength(1);
});

test('an endpoint disabled while a retry is pending receives nothing further', async () => {
  const subscriber = await subscriberAnswering(() => 'hang');
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['sale.updated'] });
  await publisher.publish('sale.updated', programId);
  await eventually(() => expect(subscriber.unanswered()).toBe(1));
  await api().put('/webhook-endpoints').set(internalHeaders(programId)).send({ webhookEndpointId: endpoint.id, active: false }).expect(200);
  subscriber.release(500);
  const failed = await deliveryReaching(service, programId, { endpointId: endpoint.id }, 'failed');
  expect(failed.attempts).toHaveLength(1);
  expect(subscriber.received).toHaveLength(1);
});

test('a deleted endpoint receives nothing further', async () => {
  const subscriber = await subscriberAnswering(() => 'hang');
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['sale.deleted'] });
  await publisher.publish('sale.deleted', programId);
  await eventually(() => expect(subscriber.unanswered()).toBe(1));
  await api().delete('/webhook-endpoints').set(internalHeaders(programId)).send({ webhookEndpointId: endpoint.id }).expect(200);
  subscriber.release(500);
  await deliveryReaching(service, programId, { endpointId: endpoint.id }, 'failed');
  const later = await publisher.publish('sale.deleted', programId);
  await eventually(async () => {
    const claim = await service.context.connection
      .collection('processed_events')
      .findOne({ _id: `webhook-dispatcher:${later.id}` as never });
    expect(claim?.state).toBe('done');
  });
  expect(await deliveriesOf(service, programId, { eventId: later.id })).toEqual([]);
  expect(subscriber.received).toHaveLength(1);
});

test('POST /webhook-deliveries/retry re-sends a delivery now with the same webhook-id', async () => {
  const subscriber = await subscriberAnswering(() => ({ status: 500 }));
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['referral.deleted'] });
  const event = await publisher.publish('referral.deleted', programId);
  const failed = await deliveryReaching(service, programId, { endpointId: endpoint.id }, 'failed');

  subscriber.answer(() => ({ status: 200, body: 'thanks' }));
  await api().post('/webhook-deliveries/retry').set(internalHeaders(newProgramId())).send({ deliveryId: failed.id }).expect(404);
  const resent = await api().post('/webhook-deliveries/retry').set(internalHeaders(programId)).send({ deliveryId: failed.id }).expect(200);
  expect(resent.body).toMatchObject({ id: failed.id, status: 'succeeded' });
  expect(resent.body.attempts).toHaveLength(4);
  expect(resent.body.attempts[3]).toMatchObject({ statusCode: 200, responseExcerpt: 'thanks' });
  expect(subscriber.received).toHaveLength(4);
  expect(subscriber.received[3]?.headers['webhook-id']).toBe(event.id);
  expect(subscriber.received[3]?.body).toBe(subscriber.received[0]?.body);
});

test('POST /webhook-deliveries/retry waits for the subscriber no longer than a test send: a slower answer is recorded as a timeout', async () => {
  // Scheduled attempts may wait 20 s; a retry, which its caller waits on through the gateway, waits the test-send timeout.
  const patient = await bootDispatcher(testDispatcherSettings({ retryScheduleMs: [0], timeoutMs: 20_000, testTimeoutMs: 300 }));
  const patientPublisher = eventPublisher(patient);
  try {
    const subscriber = await subscriberAnswering((_webhook, index) =>
      index === 0 ? { status: 500 } : { status: 200, body: 'late thanks', delayMs: 3000 },
    );
    const endpoint = await createEndpoint(patient, programId, { url: subscriber.url, eventTypes: ['coupon.updated'] });
    await patientPublisher.publish('coupon.updated', programId);
    const failed = await deliveryReaching(patient, programId, { endpointId: endpoint.id }, 'failed');
    const resent = await request(patient.server)
      .post('/webhook-deliveries/retry')
      .set(internalHeaders(programId))
      .send({ deliveryId: failed.id })
      .expect(200);
    expect(resent.body).toMatchObject({ id: failed.id, status: 'failed' });
    expect(resent.body.attempts).toHaveLength(2);
    expect(resent.body.attempts[1]).toMatchObject({ statusCode: null, error: expect.stringMatching(/no complete answer within 300 ms/) });
  } finally {
    await patientPublisher.close();
    await patient.stop();
  }
});

test('POST /webhook-deliveries/recover re-sends every failed delivery of the endpoint in the window', async () => {
  const subscriber = await subscriberAnswering(() => ({ status: 500 }));
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['coupon.deleted'] });
  const before = await publisher.publish('coupon.deleted', programId);
  await deliveryReaching(service, programId, { eventId: before.id }, 'failed');
  const since = new Date().toISOString();
  const inWindow = [await publisher.publish('coupon.deleted', programId), await publisher.publish('coupon.deleted', programId)];
  for (const event of inWindow) await deliveryReaching(service, programId, { eventId: event.id }, 'failed');

  subscriber.answer(() => ({ status: 200 }));
  const recovered = await api()
    .post('/webhook-deliveries/recover')
    .set(internalHeaders(programId))
    .send({ webhookEndpointId: endpoint.id, since })
    .expect(200);
  expect(recovered.body).toEqual({ recovered: 2 });
  for (const event of inWindow) await deliveryReaching(service, programId, { eventId: event.id }, 'succeeded');
  const [outside] = await deliveriesOf(service, programId, { eventId: before.id });
  expect(outside?.status).toBe('failed');
});

test('POST /webhook-endpoints/test sends a signed ping', async () => {
  const subscriber = await subscriberAnswering(() => ({ status: 200, body: 'pong' }));
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['*'] });
  const response = await api()
    .post('/webhook-endpoints/test')
    .set(internalHeaders(programId))
    .send({ webhookEndpointId: endpoint.id })
    .expect(200);
  expect(response.body).toMatchObject({ succeeded: true, statusCode: 200, responseExcerpt: 'pong', error: null });
  const [ping] = subscriber.received;
  expect(ping?.headers['webhook-id']).toBe(response.body.webhookId);
  expect(new Webhook(endpoint.secret).verify(ping?.body as string, ping?.headers as Record<string, string>)).toMatchObject({
    event: 'ping',
    data: { webhookEndpointId: endpoint.id },
  });
});

test('an endpoint failing continuously for the configured time (5 days in production) is disabled', async () => {
  const impatient = await bootDispatcher(testDispatcherSettings({ retryScheduleMs: [0, 200, 200, 200, 200, 200], disableAfterMs: 500 }));
  const impatientPublisher = eventPublisher(impatient);
  try {
    const subscriber = await subscriberAnswering(() => ({ status: 500 }));
    const endpoint = await createEndpoint(impatient, programId, { url: subscriber.url, eventTypes: ['sale.created'] });
    await impatientPublisher.publish('sale.created', programId);
    await eventually(async () => {
      const response = await request(impatient.server)
        .get('/webhook-endpoints')
        .query({ id: endpoint.id })
        .set(internalHeaders(programId))
        .expect(200);
      expect(response.body).toMatchObject({ active: false, disabledReason: expect.stringMatching(/failed since/) });
    });
    // An attempt in flight when the endpoint was disabled ends the delivery as it finishes.
    const delivery = await deliveryReaching(impatient, programId, { endpointId: endpoint.id }, 'failed');
    expect(delivery.attempts.length).toBeLessThan(6);
  } finally {
    await impatientPublisher.close();
    await impatient.stop();
  }
});
