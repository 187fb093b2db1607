import type { RunningService } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import request from 'supertest';
import { BACKFILL_PAGE_SIZE } from '../src/domain/backfill-endpoint';
import { bootDispatcher, createEndpoint, deliveriesOf, eventPublisher, testDispatcherSettings } from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

/** More than two pages, so that a backfill takes several turns. */
const EVENTS = BACKFILL_PAGE_SIZE * 2 + 30;

const serviceSettings = testServiceSettings('webhook-dispatcher');
const running: RunningService[] = [];
let subscriber: Subscriber;

beforeAll(async () => {
  subscriber = await startSubscriber();
  // Two replicas: both work on every backfill in progress, each turn a page.
  const settings = testDispatcherSettings({ pollIntervalMs: 20 });
  running.push(await bootDispatcher(settings, serviceSettings), await bootDispatcher(settings, serviceSettings));
});
afterAll(async () => {
  for (const service of running) await service.stop();
  await subscriber.close();
});

test('a backfill worked by two replicas, then walked again from the start (a crash that lost its cursor), delivers each past event once, with its id', async () => {
  const [one, two] = running as [RunningService, RunningService];
  const programId = newProgramId();
  const publisher = eventPublisher(one);
  const published = new Set<string>();
  for (let index = 0; index < EVENTS; index += 1) published.add((await publisher.publish('referral.created', programId)).id);
  await publisher.close();
  await eventually(async () => {
    const stored = await request(two.server).get('/events').query({ limit: '1000' }).set(internalHeaders(programId)).expect(200);
    expect(stored.body).toHaveLength(EVENTS);
  }, 60_000);

  const since = new Date(Date.now() - 3_600_000);
  const endpoint = await createEndpoint(one, programId, {
    url: subscriber.urlFor('backfilled'),
    eventTypes: ['referral.*'],
    backfillSince: since.toISOString(),
  });
  const backfills = one.context.connection.collection('webhook_backfills');
  await eventually(async () => expect(await backfills.countDocuments({ _id: endpoint.id as never })).toBe(0), 60_000);

  // As if the cursor had never moved: the whole walk again.
  await backfills.insertOne({
    _id: endpoint.id as never,
    programId,
    eventTypes: ['referral.created'],
    since,
    until: new Date(),
    cursor: null,
    createdAt: new Date(),
  });
  await eventually(async () => expect(await backfills.countDocuments({ _id: endpoint.id as never })).toBe(0), 60_000);

  await eventually(
    async () =>
      expect(await deliveriesOf(one, programId, { endpointId: endpoint.id, status: 'succeeded', limit: '1000' })).toHaveLength(EVENTS),
    60_000,
  );
  const ids = subscriber.received
    .filter((webhook) => webhook.path === '/backfilled')
    .map((webhook) => String(webhook.headers['webhook-id']));
  expect(ids).toHaveLength(EVENTS);
  expect(new Set(ids)).toEqual(published);
}, 180_000);
