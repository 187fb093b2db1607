import { PUBLIC_EVENT_TYPES, type PublicEventType } from '@affiliate/contracts';
import type { RunningService } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId } from '@affiliate/platform/testing';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { bootDispatcher, createEndpoint, deliveriesOf, deliveryReaching, eventPublisher, eventsAcknowledged } from './support/dispatcher';
import { startSubscriber, type ReceivedWebhook, type Subscriber } from './support/subscriber';

let service: RunningService;
let subscriber: Subscriber;
let publisher: ReturnType<typeof eventPublisher>;
const programId = newProgramId();
const otherProgramId = newProgramId();

beforeAll(async () => {
  [service, subscriber] = await Promise.all([bootDispatcher(), startSubscriber()]);
  publisher = eventPublisher(service);
});
afterAll(async () => {
  await publisher.close();
  await service.stop();
  await subscriber.close();
});

const receivedAt = (path: string) => subscriber.received.filter((webhook) => webhook.path === `/${path}`);
const firstAt = (path: string) =>
  eventually(() => {
    const [webhook] = receivedAt(path);
    if (!webhook) throw new Error(`nothing received at /${path} yet`);
    return webhook;
  });
const eventsAt = (path: string) =>
  receivedAt(path)
    .map((webhook) => (JSON.parse(webhook.body) as { event: string }).event)
    .sort();

test('each public event type reaches exactly the endpoints subscribed to it and no other', async () => {
  const secrets = new Map<string, string>();
  for (const type of PUBLIC_EVENT_TYPES) {
    secrets.set(type, (await createEndpoint(service, programId, { url: subscriber.urlFor(type), eventTypes: [type] })).secret);
  }
  await createEndpoint(service, programId, { url: subscriber.urlFor('sales'), eventTypes: ['sale.*'] });
  await createEndpoint(service, programId, { url: subscriber.urlFor('codes-and-coupons'), eventTypes: ['promocode.created', 'coupon.*'] });
  await createEndpoint(service, programId, { url: subscriber.urlFor('everything'), eventTypes: ['*'] });
  await createEndpoint(service, programId, { url: subscriber.urlFor('inactive'), eventTypes: ['*'], active: false });
  await createEndpoint(service, otherProgramId, { url: subscriber.urlFor('other-program'), eventTypes: ['*'] });

  const internal = await publisher.publish('program.updated', programId, { id: programId });
  const published = new Map<PublicEventType, string>();
  for (const type of PUBLIC_EVENT_TYPES) published.set(type, (await publisher.publish(type, programId)).id);

  await eventually(() => expect(receivedAt('everything')).toHaveLength(15));
  await eventually(() => expect(receivedAt('sales')).toHaveLength(3));
  await eventually(() => expect(receivedAt('codes-and-coupons')).toHaveLength(4));
  for (const type of PUBLIC_EVENT_TYPES) {
    await eventually(() => expect(receivedAt(type)).toHaveLength(1));
    const [webhook] = receivedAt(type) as [ReceivedWebhook];
    expect(JSON.parse(webhook.body)).toMatchObject({ id: published.get(type), event: type });
    expect(new Webhook(secrets.get(type) as string).verify(webhook.body, webhook.headers as Record<string, string>)).toMatchObject({
      event: type,
    });
  }
  expect(eventsAt('everything')).toEqual([...PUBLIC_EVENT_TYPES].sort());
  expect(eventsAt('sales')).toEqual(['sale.created', 'sale.deleted', 'sale.updated']);
  expect(eventsAt('codes-and-coupons')).toEqual(['coupon.created', 'coupon.deleted', 'coupon.updated', 'promocode.created']);

  // The internal event was handled (acked) and produced no delivery anywhere.
  await eventually(async () => {
    const claim = await service.context.connection
      .collection('processed_events')
      .findOne({ _id: `webhook-dispatcher:${internal.id}` as never });
    expect(claim?.state).toBe('done');
  });
  expect(await deliveriesOf(service, programId, { eventId: internal.id })).toEqual([]);
  expect(subscriber.received.some((webhook) => webhook.body.includes(internal.id))).toBe(false);
  expect(receivedAt('inactive')).toEqual([]);
  expect(receivedAt('other-program')).toEqual([]);
});

test('the body is {id, event, createdAt, data} as JSON with the Standard Webhooks headers', async () => {
  const endpoint = await createEndpoint(service, programId, { url: subscriber.urlFor('shape'), eventTypes: ['affiliate.updated'] });
  const event = await publisher.publish('affiliate.updated', programId, { id: 'a1f2c3d4-5b6a-4c7d-8e9f-0a1b2c3d4e5f', status: 'ACTIVE' });
  const webhook = await firstAt('shape');
  expect(JSON.parse(webhook.body)).toEqual({ id: event.id, event: 'affiliate.updated', createdAt: event.occurredAt, data: event.data });
  expect(webhook.headers['content-type']).toBe('application/json');
  expect(webhook.headers['webhook-id']).toBe(event.id);
  expect(webhook.headers['webhook-timestamp']).toMatch(/^\d+$/);
  expect(webhook.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  expect(new Webhook(endpoint.secret).verify(webhook.body, webhook.headers as Record<string, string>)).toBeDefined();
});

test('a tampered body or a stale timestamp fails verification with the standardwebhooks library', async () => {
  const endpoint = await createEndpoint(service, programId, { url: subscriber.urlFor('tamper'), eventTypes: ['referral.created'] });
  await publisher.publish('referral.created', programId, { id: 'c3d4e5f6-7a8b-4c9d-8e1f-2a3b4c5d6e7f', plan: 'pro' });
  const webhook = await firstAt('tamper');
  const verifier = new Webhook(endpoint.secret);
  const headers = webhook.headers as Record<string, string>;
  expect(() => verifier.verify(webhook.body.replace('pro', 'enterprise'), headers)).toThrow(/No matching signature/);
  const timestamp = Number(headers['webhook-timestamp']);
  const sixMinutesLater = jest.spyOn(Date, 'now').mockReturnValue((timestamp + 6 * 60) * 1000);
  try {
    expect(() => verifier.verify(webhook.body, headers)).toThrow(/too old/);
  } finally {
    sixMinutesLater.mockRestore();
  }
  expect(() => verifier.verify(webhook.body, headers)).not.toThrow();
});

test('during a secret rotation each message carries signatures of the old and the new secret', async () => {
  const endpoint = await createEndpoint(service, programId, { url: subscriber.urlFor('rotation'), eventTypes: ['coupon.updated'] });
  const rotated = await request(service.server)
    .put('/webhook-endpoints')
    .set(internalHeaders(programId))
    .send({ webhookEndpointId: endpoint.id, rotateSecret: true })
    .expect(200);
  await publisher.publish('coupon.updated', programId);
  const webhook = await firstAt('rotation');
  const headers = webhook.headers as Record<string, string>;
  expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
  expect(() => new Webhook(endpoint.secret).verify(webhook.body, headers)).not.toThrow();
  expect(() => new Webhook(rotated.body.secret as string).verify(webhook.body, headers)).not.toThrow();
});

test('an event received again after its delivery ended sends nothing more and puts nothing back on the schedule', async () => {
  const ownProgramId = newProgramId();
  const endpoint = await createEndpoint(service, ownProgramId, { url: subscriber.urlFor('again'), eventTypes: ['referral.created'] });
  const event = await publisher.publish('referral.created', ownProgramId);
  await deliveryReaching(service, ownProgramId, { endpointId: endpoint.id }, 'succeeded');
  const schedule = service.context.connection.collection('webhook_schedule');
  await eventually(async () => expect(await schedule.countDocuments({ programId: ownProgramId })).toBe(0));

  const acknowledged = await eventsAcknowledged(service);
  await publisher.publishAgain(event);
  await eventually(async () => expect(await eventsAcknowledged(service)).toBeGreaterThan(acknowledged));
  // Nothing waits to be sent (the backlog the services shed by), and the subscriber got it once.
  expect(await schedule.countDocuments({ programId: ownProgramId })).toBe(0);
  expect(receivedAt('again')).toHaveLength(1);
  const [delivery] = await deliveriesOf(service, ownProgramId, { eventId: event.id });
  expect(delivery).toMatchObject({ status: 'succeeded', attempts: [expect.anything()] });
});
