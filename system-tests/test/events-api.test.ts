import { randomBytes, randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import { signWebhook, WEBHOOK_SECRET_PREFIX } from '@affiliate/contracts';
import { eventually, startDisposableRabbit } from '@affiliate/platform/testing';
import { Subscriber, System, okBody, type Api, type Delivery } from '../harness';

/**
 * GET /events and what is built on the stored events: backfilling a new endpoint, replaying a
 * window to one, and telling a receiver why its signature check fails. The dispatcher makes one
 * attempt and one retry (so a failing delivery ends quickly) and sweeps expired events every second.
 */
let system: System;
const subscribers: Subscriber[] = [];

beforeAll(async () => {
  system = await System.start({}, startDisposableRabbit, {
    'webhook-dispatcher': { WEBHOOK_RETRY_SCHEDULE: '0,300ms', EVENT_SWEEP_INTERVAL: '1s' },
  });
}, 180_000);
afterAll(async () => {
  await Promise.all(subscribers.map((subscriber) => subscriber.stop()));
  await system?.stop();
});

type Event = { id: string; event: string; createdAt: string; data: Record<string, unknown> };

async function newSubscriber(): Promise<{ subscriber: Subscriber; url: string }> {
  const subscriber = new Subscriber();
  subscribers.push(subscriber);
  return { subscriber, url: await subscriber.start() };
}

async function createAffiliate(api: Api, name: string): Promise<{ id: string }> {
  return okBody(
    api.post('/affiliates', {
      firstName: name,
      lastName: 'Events',
      email: `${name.toLowerCase()}-${randomUUID().slice(0, 6)}@example.com`,
    }),
  );
}

/** The events of the program once `count` of them are stored (the dispatcher stores them as it consumes them). */
async function eventsOnceStored(api: Api, count: number, query = ''): Promise<Event[]> {
  return eventually(async () => {
    const events = await okBody<Event[]>(api.get(`/events${query}`));
    expect(events).toHaveLength(count);
    return events;
  }, 30_000);
}

const webhookIdOf = (delivery: Delivery) => String(delivery.headers['webhook-id']);

/** The three Standard Webhooks headers of a delivery, as a receiver would paste them. */
const signedHeadersOf = (delivery: Delivery): Record<string, string> => ({
  'webhook-id': webhookIdOf(delivery),
  'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
  'webhook-signature': String(delivery.headers['webhook-signature']),
});

test('GET /events lists the public events newest first, filtered by type, objectId and createdAt, paged; each id is the webhook-id its deliveries carry', async () => {
  const { api } = await system.createProgram();
  const { subscriber, url } = await newSubscriber();
  await okBody(api.post('/webhook-endpoints', { url, eventTypes: ['affiliate.*'] }));
  const first = await createAffiliate(api, 'First');
  await eventsOnceStored(api, 1);
  const second = await createAffiliate(api, 'Second');
  await eventsOnceStored(api, 2);
  await okBody(api.put('/affiliates', { affiliateId: first.id, firstName: 'Renamed' }));

  const events = await eventsOnceStored(api, 3);
  expect(events.map((event) => [event.event, event.data.id])).toEqual([
    ['affiliate.updated', first.id],
    ['affiliate.created', second.id],
    ['affiliate.created', first.id],
  ]);
  const [updated, secondCreated, firstCreated] = events as [Event, Event, Event];

  expect((await okBody<Event[]>(api.get('/events?type=affiliate.updated'))).map((event) => event.id)).toEqual([updated.id]);
  expect((await okBody<Event[]>(api.get(`/events?objectId=${first.id}`))).map((event) => event.id)).toEqual([updated.id, firstCreated.id]);
  expect(
    (await okBody<Event[]>(api.get(`/events?createdAt[gte]=${encodeURIComponent(secondCreated.createdAt)}`))).map((event) => event.id),
  ).toEqual([updated.id, secondCreated.id]);
  expect(
    (await okBody<Event[]>(api.get(`/events?createdAt[lt]=${encodeURIComponent(secondCreated.createdAt)}`))).map((event) => event.id),
  ).toEqual([firstCreated.id]);
  expect(await okBody(api.get(`/events?id=${secondCreated.id}`))).toEqual(secondCreated);

  // Paged like every list: the Link header leads to the next page.
  const page = await api.get('/events?limit=2');
  expect(page.body.map((event: Event) => event.id)).toEqual([updated.id, secondCreated.id]);
  const next = /<[^>]*\/api\/v1(\/events\?[^>]*)>; rel="next"/.exec(page.headers.get('link') ?? '');
  expect(next).not.toBeNull();
  expect((await okBody<Event[]>(api.get((next as RegExpExecArray)[1] as string))).map((event) => event.id)).toEqual([firstCreated.id]);

  // What the subscriber received: the same events, the event id as webhook-id, the same body.
  const received = await eventually(() => {
    expect(subscriber.deliveries).toHaveLength(3);
    return subscriber.deliveries;
  }, 30_000);
  for (const delivery of received) {
    const event = events.find((candidate) => candidate.id === webhookIdOf(delivery));
    expect(event).toEqual(delivery.body);
  }

  // Filters are checked: an unknown type or filter, and an empty time range, are 400s.
  expect((await api.get('/events?type=program.created')).status).toBe(400);
  expect((await api.get('/events?color=blue')).status).toBe(400);
  expect(
    (
      await api.get(
        `/events?createdAt[gte]=${encodeURIComponent(updated.createdAt)}&createdAt[lt]=${encodeURIComponent(firstCreated.createdAt)}`,
      )
    ).status,
  ).toBe(400);
});

test('tenant isolation: another program never sees, replays or verifies against the events of a program', async () => {
  const a = await system.createProgram();
  const b = await system.createProgram();
  const affiliate = await createAffiliate(a.api, 'Isolated');
  const [event] = (await eventsOnceStored(a.api, 1)) as [Event];
  expect(event.data.id).toBe(affiliate.id);
  const endpoint = await okBody(a.api.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['*'] }));

  expect(await okBody(b.api.get('/events'))).toEqual([]);
  expect(await okBody(b.api.get(`/events?objectId=${affiliate.id}`))).toEqual([]);
  expect((await b.api.get(`/events?id=${event.id}`)).status).toBe(404);
  const since = new Date(Date.now() - 3_600_000).toISOString();
  expect((await b.api.post('/webhook-deliveries/replay', { webhookEndpointId: endpoint.id, since })).status).toBe(404);
  expect((await b.api.post('/webhook-endpoints/verify', { webhookEndpointId: endpoint.id, headers: {}, body: '{}' })).status).toBe(404);
});

/**
 * Runs `check` with an event of the program put in the store as created 31 days ago, when the
 * retention was `writtenWithDays` (its expiresAt), and the collection it is in.
 */
async function withOldEvent(
  programId: string,
  writtenWithDays: number,
  check: (stored: mongoose.mongo.Collection, oldId: string) => Promise<void>,
): Promise<void> {
  const client = await mongoose.mongo.MongoClient.connect(system.mongo.url);
  try {
    const stored = client.db(`${system.dbPrefix}_webhook_dispatcher`).collection('webhook_events');
    const oldId = randomUUID();
    const createdAt = new Date(Date.now() - 31 * 86_400_000);
    const body = JSON.stringify({ id: oldId, event: 'affiliate.created', createdAt: createdAt.toISOString(), data: { id: randomUUID() } });
    await stored.insertOne({
      _id: oldId as never,
      programId,
      type: 'affiliate.created',
      objectId: null,
      body,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + writtenWithDays * 86_400_000),
    });
    await check(stored, oldId);
  } finally {
    await client.close();
  }
}

test('retention: events past EVENT_RETENTION_DAYS are neither listed nor kept (the sweep deletes them where no TTL monitor runs)', async () => {
  const { programId, api } = await system.createProgram();
  await createAffiliate(api, 'Recent');
  const [recent] = (await eventsOnceStored(api, 1)) as [Event];

  await withOldEvent(programId, 30, async (stored, oldId) => {
    expect((await okBody<Event[]>(api.get('/events'))).map((event) => event.id)).toEqual([recent.id]);
    await eventually(async () => expect(await stored.countDocuments({ _id: oldId as never })).toBe(0), 30_000);
    expect(await stored.countDocuments({ _id: recent.id as never })).toBe(1);
  });
});

test('retention lowered: an event older than EVENT_RETENTION_DAYS is deleted by the sweep even though it was written with a longer retention (its expiresAt still ahead)', async () => {
  const { programId, api } = await system.createProgram();
  await createAffiliate(api, 'Kept');
  const [kept] = (await eventsOnceStored(api, 1)) as [Event];

  // Written while the retention was 90 days: the dispatcher now runs with the default 30.
  await withOldEvent(programId, 90, async (stored, oldId) => {
    await eventually(async () => expect(await stored.countDocuments({ _id: oldId as never })).toBe(0), 30_000);
    expect(await stored.countDocuments({ _id: kept.id as never })).toBe(1);
  });
});

test('an empty period (createdAt[gte] = createdAt[lt]) is an empty list, as on every list; a reversed one a 400', async () => {
  const { api } = await system.createProgram();
  await createAffiliate(api, 'Period');
  const [event] = (await eventsOnceStored(api, 1)) as [Event];
  const at = encodeURIComponent(event.createdAt);
  expect(await okBody(api.get(`/events?createdAt[gte]=${at}&createdAt[lt]=${at}`))).toEqual([]);
  const reversed = await api.get(
    `/events?createdAt[gte]=${at}&createdAt[lt]=${encodeURIComponent(new Date(Date.parse(event.createdAt) - 1000).toISOString())}`,
  );
  expect(reversed.status).toBe(400);
  expect(reversed.body.error).toBe('createdAt[gte] must not be after createdAt[lt]');
});

test('backfillSince: a new endpoint receives the stored events since then that match its types, each once, with their original ids', async () => {
  const { api } = await system.createProgram();
  await createAffiliate(api, 'Past');
  await createAffiliate(api, 'Older');
  await okBody(api.post('/coupons', { name: 'Not subscribed', percentOff: 10 }));
  const past = await eventsOnceStored(api, 2, '?type=affiliate.created');
  await eventsOnceStored(api, 3);

  const { subscriber, url } = await newSubscriber();
  const endpoint = await okBody(
    api.post('/webhook-endpoints', { url, eventTypes: ['affiliate.*'], backfillSince: new Date(Date.now() - 3_600_000).toISOString() }),
  );
  await eventually(() => expect(subscriber.deliveries.map(webhookIdOf).sort()).toEqual(past.map((event) => event.id).sort()), 30_000);
  for (const delivery of subscriber.deliveries) expect(delivery.body).toEqual(past.find((event) => event.id === webhookIdOf(delivery)));

  // A later event comes by the fan-out; by then the backfill has ended, and each event arrived once.
  const later = await createAffiliate(api, 'Later');
  await eventually(() => expect(subscriber.deliveries.some((delivery) => delivery.body.data.id === later.id)).toBe(true), 30_000);
  const ids = subscriber.deliveries.map(webhookIdOf);
  expect(ids).toHaveLength(3);
  expect(new Set(ids).size).toBe(3);
  expect(await okBody(api.get(`/webhook-deliveries?endpointId=${endpoint.id}`))).toHaveLength(3);

  // Without backfillSince, an endpoint starts with the next event; a backfill from the future is refused.
  const { subscriber: plain, url: plainUrl } = await newSubscriber();
  await okBody(api.post('/webhook-endpoints', { url: plainUrl, eventTypes: ['affiliate.*'] }));
  const last = await createAffiliate(api, 'Last');
  await eventually(() => expect(plain.deliveries.map((delivery) => delivery.body.data.id)).toEqual([last.id]), 30_000);
  const future = await api.post('/webhook-endpoints', {
    url: plainUrl,
    eventTypes: ['*'],
    backfillSince: new Date(Date.now() + 3_600_000).toISOString(),
  });
  expect(future.status).toBe(400);
});

test('replay re-sends the failed deliveries of a window, and the succeeded ones too with includeSucceeded, with their original ids', async () => {
  const { api } = await system.createProgram();
  const { subscriber, url } = await newSubscriber();
  const since = new Date(Date.now() - 60_000).toISOString();
  const endpoint = await okBody(api.post('/webhook-endpoints', { url, eventTypes: ['affiliate.created'] }));
  const received = await createAffiliate(api, 'Received');
  await eventually(() => expect(subscriber.deliveries).toHaveLength(1), 30_000);

  subscriber.failing = true;
  const missed = await createAffiliate(api, 'Missed');
  // Both attempts of the missed event fail (the schedule here is one attempt and one retry).
  await eventually(async () => {
    const failed = await okBody(api.get(`/webhook-deliveries?endpointId=${endpoint.id}&status=failed`));
    expect(failed).toHaveLength(1);
  }, 30_000);
  subscriber.failing = false;
  const events = await eventsOnceStored(api, 2);
  const eventOf = (affiliateId: string) => events.find((event) => event.data.id === affiliateId) as Event;

  const failedOnly = await okBody(api.post('/webhook-deliveries/replay', { webhookEndpointId: endpoint.id, since }));
  expect(failedOnly).toEqual({ queued: 1 });
  await eventually(() => expect(subscriber.deliveries.map(webhookIdOf)).toEqual([eventOf(received.id).id, eventOf(missed.id).id]), 30_000);
  expect(subscriber.deliveries[1]?.body).toEqual(eventOf(missed.id));

  // Recorded as received (the answer reaches the subscriber before the log says so).
  await eventually(
    async () => expect(await okBody(api.get(`/webhook-deliveries?endpointId=${endpoint.id}&status=succeeded`))).toHaveLength(2),
    30_000,
  );
  const everything = await okBody(
    api.post('/webhook-deliveries/replay', { webhookEndpointId: endpoint.id, since, includeSucceeded: true }),
  );
  expect(everything).toEqual({ queued: 2 });
  await eventually(
    () => expect(subscriber.deliveries.map(webhookIdOf).slice(2).sort()).toEqual([eventOf(received.id).id, eventOf(missed.id).id].sort()),
    30_000,
  );

  // eventTypes narrows the endpoint's subscriptions, never widens them.
  expect(
    await okBody(
      api.post('/webhook-deliveries/replay', {
        webhookEndpointId: endpoint.id,
        since,
        eventTypes: ['affiliate.updated'],
        includeSucceeded: true,
      }),
    ),
  ).toEqual({ queued: 0 });
  // A window the wrong way round is a 400.
  expect(
    (await api.post('/webhook-deliveries/replay', { webhookEndpointId: endpoint.id, since: new Date().toISOString(), until: since }))
      .status,
  ).toBe(400);
});

/** A new program's endpoint for affiliate.created, and the one delivery it got once an affiliate was created. */
async function oneDelivery(name: string): Promise<{ api: Api; endpoint: { id: string; secret: string }; delivery: Delivery }> {
  const { api } = await system.createProgram();
  const { subscriber, url } = await newSubscriber();
  const endpoint = await okBody(api.post('/webhook-endpoints', { url, eventTypes: ['affiliate.created'] }));
  await createAffiliate(api, name);
  const delivery = await eventually(() => {
    expect(subscriber.deliveries).toHaveLength(1);
    return subscriber.deliveries[0] as Delivery;
  }, 30_000);
  return { api, endpoint, delivery };
}

test('verify names each failure (MALFORMED_HEADER, WRONG_SECRET, BODY_ALTERED, TIMESTAMP_SKEW), accepts a good delivery, and never returns the secret', async () => {
  const { api, endpoint, delivery } = await oneDelivery('Signed');
  const headers = signedHeadersOf(delivery);
  const id = headers['webhook-id'] as string;
  const timestamp = Number(headers['webhook-timestamp']);
  const answers: unknown[] = [];
  const verify = async (sent: Record<string, string>, body: string) => {
    const answer = await okBody(api.post('/webhook-endpoints/verify', { webhookEndpointId: endpoint.id, headers: sent, body }));
    answers.push(answer);
    return answer;
  };

  expect(await verify(headers, delivery.rawBody)).toEqual({ valid: true, failure: null });
  expect(await verify({ 'webhook-id': id, 'webhook-timestamp': String(timestamp) }, delivery.rawBody)).toEqual({
    valid: false,
    failure: 'MALFORMED_HEADER',
  });
  expect(await verify({ ...headers, 'webhook-timestamp': 'yesterday' }, delivery.rawBody)).toEqual({
    valid: false,
    failure: 'MALFORMED_HEADER',
  });
  const otherSecret = `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
  expect(
    await verify({ ...headers, 'webhook-signature': signWebhook(otherSecret, id, timestamp, delivery.rawBody) }, delivery.rawBody),
  ).toEqual({ valid: false, failure: 'WRONG_SECRET' });
  // Parsed and serialised again (pretty-printed): the bytes signed are gone.
  expect(await verify(headers, JSON.stringify(JSON.parse(delivery.rawBody), null, 2))).toEqual({ valid: false, failure: 'BODY_ALTERED' });
  const hourAgo = timestamp - 3600;
  const stale = {
    ...headers,
    'webhook-timestamp': String(hourAgo),
    'webhook-signature': signWebhook(endpoint.secret, id, hourAgo, delivery.rawBody),
  };
  expect(await verify(stale, delivery.rawBody)).toEqual({ valid: false, failure: 'TIMESTAMP_SKEW' });

  // During a rotation's overlap, a message signed with the previous secret still verifies.
  await okBody(api.put('/webhook-endpoints', { webhookEndpointId: endpoint.id, rotateSecret: true }));
  expect(await verify(headers, delivery.rawBody)).toEqual({ valid: true, failure: null });

  const secretKey = (endpoint.secret as string).slice(WEBHOOK_SECRET_PREFIX.length);
  for (const answer of answers) expect(JSON.stringify(answer)).not.toContain(secretKey);
});

test('verify checks up to 10 signatures of a webhook-signature header, the right one among them, and answers MALFORMED_HEADER to more', async () => {
  const { api, endpoint, delivery } = await oneDelivery('Many');
  const headers = signedHeadersOf(delivery);
  const wrong = (count: number) => Array.from({ length: count }, () => `v1,${randomBytes(32).toString('base64')}`);
  const verify = (signatures: string[]) =>
    okBody(
      api.post('/webhook-endpoints/verify', {
        webhookEndpointId: endpoint.id,
        headers: { ...headers, 'webhook-signature': signatures.join(' ') },
        body: delivery.rawBody,
      }),
    );

  expect(await verify([...wrong(9), headers['webhook-signature'] as string])).toEqual({ valid: true, failure: null });
  expect(await verify(wrong(10))).toEqual({ valid: false, failure: 'WRONG_SECRET' });
  expect(await verify([...wrong(10), headers['webhook-signature'] as string])).toEqual({ valid: false, failure: 'MALFORMED_HEADER' });
  // A header the size of the limit (4 KB, some 80 signatures) is answered like any other.
  expect(await verify(wrong(80))).toEqual({ valid: false, failure: 'MALFORMED_HEADER' });
});
