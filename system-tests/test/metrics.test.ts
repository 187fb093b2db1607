import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@affiliate/platform/testing';
import amqp from 'amqplib';
import { okBody as ok, Subscriber, System, type Api, type Component } from '../harness';
import { familiesOf, sampleOf } from '../prometheus-text';

/**
 * Issue 26, domain metrics: each component's metrics listener is scraped after a scripted scenario
 * through the whole system (processes, broker, database), and the values must have moved as the
 * scenario says. Every delivery waits its turn per endpoint (`WEBHOOK_ENDPOINT_CONCURRENCY=1`) and a
 * hanging subscriber is not given up on before it is released, so the backlog can be seen.
 */
let system: System;
const subscriber = new Subscriber();
let hooks = '';

beforeAll(async () => {
  system = await System.start({ WEBHOOK_ENDPOINT_CONCURRENCY: '1', WEBHOOK_TIMEOUT_MS: '60000' });
  hooks = await subscriber.start();
}, 180_000);

afterAll(async () => {
  await subscriber.stop();
  await system?.stop();
});

const scrape = (component: Component) => system.scrape(component);
const value = async (component: Component, name: string, labels: Record<string, string> = {}) =>
  sampleOf(await scrape(component), name, labels);
const DISPATCHER_QUEUE = { queue: 'webhook-dispatcher.events' };

async function programWithEndpoint(url: string, eventTypes = ['affiliate.created']): Promise<{ api: Api; programId: string }> {
  const { api, programId } = await system.createProgram();
  await ok(api.post('/webhook-endpoints', { url, eventTypes }));
  return { api, programId };
}

/** The affiliate.created webhook of this affiliate, once the test's subscriber has it. */
const webhookOf = (affiliateId: string) =>
  eventually(
    () => {
      const found = subscriber.events('affiliate.created').find((delivery) => delivery.body.data.id === affiliateId);
      expect(found).toBeDefined();
      return found!;
    },
    30_000,
    100,
  );

/** An event envelope published on the exchange as a service's relay would, confirmed by the broker. */
async function publishEvent(event: { id: string; type: string }): Promise<void> {
  const connection = await amqp.connect(system.rabbit.url);
  try {
    const channel = await connection.createConfirmChannel();
    channel.publish('affiliate.events', event.type, Buffer.from(JSON.stringify(event)), {
      persistent: true,
      messageId: event.id,
      contentType: 'application/json',
    });
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

const createAffiliate = (api: Api) =>
  ok(api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: `ada-${randomUUID().slice(0, 8)}@example.com` }));

/** A subscriber answering every delivery with `status`, or holding it until `release()`. */
async function answering(
  status: number | 'hang',
): Promise<{ url: string; received: () => number; release: () => void; close: () => Promise<void> }> {
  const held: ServerResponse[] = [];
  let received = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      if (status === 'hang') held.push(response);
      else response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    release: () => {
      for (const response of held.splice(0)) response.writeHead(200).end('ok');
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

test('every component exports the domain metrics on its metrics listener, labelled with its name', async () => {
  for (const component of ['gateway', 'coupon', 'affiliate', 'referral', 'sale', 'webhook-dispatcher'] as Component[]) {
    const text = await scrape(component);
    expect(familiesOf(text)).toEqual(
      expect.arrayContaining([
        'outbox_documents_pending',
        'outbox_oldest_pending_age_seconds',
        'outbox_events_published_total',
        'events_consumed_total',
        'circuit_breakers',
      ]),
    );
    expect(text).toContain(`outbox_documents_pending{service="${component}"}`);
  }
  expect(familiesOf(await scrape('webhook-dispatcher'))).toEqual(
    expect.arrayContaining(['webhook_deliveries_due', 'webhook_event_to_delivery_seconds']),
  );
  expect(familiesOf(await scrape('sale'))).toEqual(expect.arrayContaining(['payout_runs_total']));
});

test('an event delivered as a webhook counts a publish, a consumed event, a succeeded attempt and delivery, and its event-to-delivery latency', async () => {
  const before = {
    gatewayPublished: await value('gateway', 'outbox_events_published_total'),
    published: await value('affiliate', 'outbox_events_published_total'),
    consumed: await value('webhook-dispatcher', 'events_consumed_total', { ...DISPATCHER_QUEUE, outcome: 'handled' }),
    attempts: await value('webhook-dispatcher', 'webhook_attempts_total', { outcome: 'succeeded' }),
    delivered: await value('webhook-dispatcher', 'webhook_deliveries_total', { outcome: 'succeeded' }),
    latencies: await value('webhook-dispatcher', 'webhook_event_to_delivery_seconds_count'),
  };
  const { api } = await programWithEndpoint(hooks);
  const affiliate = await createAffiliate(api);
  await eventually(
    () => expect(subscriber.events('affiliate.created').some((delivery) => delivery.body.data.id === affiliate.id)).toBe(true),
    30_000,
    100,
  );
  await eventually(
    async () => {
      // program.created left the gateway's outbox, affiliate.created the affiliate service's.
      expect(await value('gateway', 'outbox_events_published_total')).toBeGreaterThan(before.gatewayPublished);
      expect(await value('affiliate', 'outbox_events_published_total')).toBeGreaterThan(before.published);
      expect(await value('affiliate', 'outbox_documents_pending')).toBe(0);
      expect(await value('affiliate', 'outbox_oldest_pending_age_seconds')).toBe(0);
      expect(await value('webhook-dispatcher', 'events_consumed_total', { ...DISPATCHER_QUEUE, outcome: 'handled' })).toBeGreaterThan(
        before.consumed,
      );
      expect(await value('webhook-dispatcher', 'webhook_attempts_total', { outcome: 'succeeded' })).toBeGreaterThan(before.attempts);
      expect(await value('webhook-dispatcher', 'webhook_deliveries_total', { outcome: 'succeeded' })).toBeGreaterThan(before.delivered);
      expect(await value('webhook-dispatcher', 'webhook_event_to_delivery_seconds_count')).toBeGreaterThan(before.latencies);
    },
    20_000,
    200,
  );
  expect(await value('webhook-dispatcher', 'webhook_event_to_delivery_seconds_sum')).toBeGreaterThan(0);
}, 60_000);

test('with RabbitMQ away the outbox holds pending documents whose age grows and publish failures count; all of it drains when the broker is back', async () => {
  const { api } = await system.createProgram();
  const failures = await value('affiliate', 'outbox_publish_failures_total');
  await system.rabbit.stop();
  try {
    await createAffiliate(api);
    const firstAge = await eventually(
      async () => {
        expect(await value('affiliate', 'outbox_documents_pending')).toBeGreaterThanOrEqual(1);
        expect(await value('affiliate', 'outbox_publish_failures_total')).toBeGreaterThan(failures);
        const age = await value('affiliate', 'outbox_oldest_pending_age_seconds');
        expect(age).toBeGreaterThan(0);
        return age;
      },
      30_000,
      200,
    );
    await eventually(
      async () => expect(await value('affiliate', 'outbox_oldest_pending_age_seconds')).toBeGreaterThan(firstAge),
      10_000,
      200,
    );
  } finally {
    await system.rabbit.start();
  }
  await eventually(
    async () => {
      expect(await value('affiliate', 'outbox_documents_pending')).toBe(0);
      expect(await value('affiliate', 'outbox_oldest_pending_age_seconds')).toBe(0);
    },
    90_000,
    500,
  );
}, 180_000);

test('a poison message is counted as dead-lettered by each consumer it reached', async () => {
  const before = await value('webhook-dispatcher', 'events_dead_lettered_total', { ...DISPATCHER_QUEUE, reason: 'poison' });
  const connection = await amqp.connect(system.rabbit.url);
  try {
    const channel = await connection.createConfirmChannel();
    channel.publish('affiliate.events', 'coupon.created', Buffer.from('this is not an event'), { persistent: true });
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
  await eventually(
    async () =>
      expect(await value('webhook-dispatcher', 'events_dead_lettered_total', { ...DISPATCHER_QUEUE, reason: 'poison' })).toBe(before + 1),
    20_000,
    200,
  );
}, 60_000);

test('an event that cannot be claimed while the database is away is retried, counted as redelivered when it comes back, and handled once the database returns', async () => {
  const { api, programId } = await programWithEndpoint(hooks);
  const affiliate = await createAffiliate(api);
  const delivered = await webhookOf(affiliate.id);
  const labels = (extra: Record<string, string>) => ({ ...DISPATCHER_QUEUE, ...extra });
  const before = {
    retried: await value('webhook-dispatcher', 'events_retried_total', labels({ reason: 'claim_failed' })),
    redelivered: await value('webhook-dispatcher', 'events_redelivered_total', DISPATCHER_QUEUE),
    handled: await value('webhook-dispatcher', 'events_consumed_total', labels({ outcome: 'handled' })),
  };
  const event = { id: randomUUID(), type: 'affiliate.created', programId, occurredAt: new Date().toISOString(), data: delivered.body.data };
  await system.mongo.stop();
  try {
    await publishEvent(event);
    await eventually(
      async () => {
        expect(await value('webhook-dispatcher', 'events_retried_total', labels({ reason: 'claim_failed' }))).toBeGreaterThan(
          before.retried,
        );
        expect(await value('webhook-dispatcher', 'events_redelivered_total', DISPATCHER_QUEUE)).toBeGreaterThan(before.redelivered);
      },
      30_000,
      200,
    );
  } finally {
    await system.mongo.start();
  }
  await eventually(
    async () =>
      expect(await value('webhook-dispatcher', 'events_consumed_total', labels({ outcome: 'handled' }))).toBeGreaterThan(before.handled),
    60_000,
    500,
  );
}, 150_000);

test('an event received again after it was handled is acknowledged as a duplicate, counted under its queue', async () => {
  const { api, programId } = await programWithEndpoint(hooks);
  const affiliate = await createAffiliate(api);
  const delivered = await webhookOf(affiliate.id);
  const duplicates = () => value('webhook-dispatcher', 'events_consumed_total', { ...DISPATCHER_QUEUE, outcome: 'duplicate' });
  const before = await duplicates();
  // The same event (its id) once more, as the broker redelivers it after a lost acknowledgement.
  const event = {
    id: delivered.body.id,
    type: 'affiliate.created',
    programId,
    occurredAt: delivered.body.createdAt,
    data: delivered.body.data,
  };
  await publishEvent(event);
  await eventually(async () => expect(await duplicates()).toBe(before + 1), 30_000, 200);
  expect(subscriber.events('affiliate.created').filter((delivery) => delivery.body.data.id === affiliate.id)).toHaveLength(1);
}, 90_000);

test("a dead upstream opens the gateway's circuit for the program that called it: one open circuit counted under that upstream, none under the others", async () => {
  const { api } = await system.createProgram();
  const opened = await value('gateway', 'circuit_breaker_opened_total', { upstream: 'coupon' });
  await system.kill('coupon', 'SIGKILL');
  try {
    await eventually(
      async () => {
        expect((await api.get('/coupons')).status).toBe(503);
        expect(await value('gateway', 'circuit_breakers', { upstream: 'coupon', state: 'open' })).toBe(1);
      },
      30_000,
      100,
    );
    expect(await value('gateway', 'circuit_breaker_opened_total', { upstream: 'coupon' })).toBe(opened + 1);
    expect(await value('gateway', 'circuit_breakers', { upstream: 'affiliate', state: 'open' })).toBe(0);
  } finally {
    await system.launch('coupon');
    await system.waitReady('coupon');
  }
}, 90_000);

test('a subscriber answering 410 Gone ends its delivery as failed and counts its endpoint as disabled (gone)', async () => {
  const gone = await answering(410);
  try {
    const { api } = await programWithEndpoint(gone.url);
    const before = {
      disabled: await value('webhook-dispatcher', 'webhook_endpoints_disabled_total', { reason: 'gone' }),
      failed: await value('webhook-dispatcher', 'webhook_deliveries_total', { outcome: 'failed' }),
      attempts: await value('webhook-dispatcher', 'webhook_attempts_total', { outcome: 'failed' }),
    };
    await createAffiliate(api);
    await eventually(
      async () => {
        expect(await value('webhook-dispatcher', 'webhook_endpoints_disabled_total', { reason: 'gone' })).toBe(before.disabled + 1);
        expect(await value('webhook-dispatcher', 'webhook_deliveries_total', { outcome: 'failed' })).toBe(before.failed + 1);
        expect(await value('webhook-dispatcher', 'webhook_attempts_total', { outcome: 'failed' })).toBe(before.attempts + 1);
      },
      30_000,
      200,
    );
  } finally {
    await gone.close();
  }
}, 60_000);

test('deliveries waiting behind a hanging subscriber are the backlog, with the age of the oldest; it empties once the subscriber answers', async () => {
  const hanging = await answering('hang');
  try {
    const { api } = await programWithEndpoint(hanging.url);
    for (let index = 0; index < 3; index += 1) await createAffiliate(api);
    // One attempt in flight (the endpoint's only slot), the other two due and waiting for it.
    await eventually(
      async () => {
        expect(hanging.received()).toBe(1);
        expect(await value('webhook-dispatcher', 'webhook_deliveries_due')).toBe(2);
        expect(await value('webhook-dispatcher', 'webhook_oldest_due_age_seconds')).toBeGreaterThan(0);
      },
      30_000,
      200,
    );
    await eventually(
      async () => {
        hanging.release();
        expect(hanging.received()).toBe(3);
        expect(await value('webhook-dispatcher', 'webhook_deliveries_due')).toBe(0);
        expect(await value('webhook-dispatcher', 'webhook_oldest_due_age_seconds')).toBe(0);
      },
      30_000,
      200,
    );
  } finally {
    hanging.release();
    await hanging.close();
  }
}, 90_000);

test('a payout run counts as completed, with the payouts it created and its duration', async () => {
  const { api } = await system.createProgram();
  await ok(
    api.post('/commission-plans', {
      name: 'Now',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  const grace = await ok(
    api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: `grace-${randomUUID().slice(0, 8)}@example.com` }),
  );
  const referral = await ok(api.post('/referrals', { affiliateId: grace.id, email: `c-${randomUUID().slice(0, 8)}@example.com` }));
  await ok(api.post('/sales', { referralId: referral.id, totalEarned: 100 }));
  const before = {
    runs: await value('sale', 'payout_runs_total', { outcome: 'completed' }),
    payouts: await value('sale', 'payouts_created_total'),
    durations: await value('sale', 'payout_run_duration_seconds_count'),
  };
  expect(await ok(api.post('/payouts', {}))).toHaveLength(1);
  expect(await value('sale', 'payout_runs_total', { outcome: 'completed' })).toBe(before.runs + 1);
  expect(await value('sale', 'payouts_created_total')).toBe(before.payouts + 1);
  expect(await value('sale', 'payout_run_duration_seconds_count')).toBe(before.durations + 1);
}, 60_000);

test('a service that cannot queue another request sheds it with 503 and counts the shed by reason', async () => {
  const { api } = await system.createProgram();
  system.componentEnv.coupon = { MAX_QUEUED_REQUESTS: '0' };
  try {
    await system.restart('coupon');
    expect(await value('coupon', 'http_requests_shed_total', { reason: 'queue_full' })).toBe(0);
    const answer = await api.get('/coupons');
    expect(answer.status).toBe(503);
    expect(await value('coupon', 'http_requests_shed_total', { reason: 'queue_full' })).toBe(1);
  } finally {
    delete system.componentEnv.coupon;
    await system.restart('coupon');
  }
}, 90_000);
