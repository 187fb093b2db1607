import { eventually } from '@affiliate/platform/testing';
import Redis from 'ioredis';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import {
  adminAuth,
  bearer,
  createProgramWithKey,
  startReplicasSharingRedis,
  stopReplicasSharingRedis,
  type ReplicasSharingRedis,
} from './support';

/** Large enough that each replica reserves shares of it (4 requests at first, one at a time below 32 left), long enough to outlast the test. */
const LIMIT = { points: 64, duration: 600 };

let replicas: ReplicasSharingRedis;
let replicaA: RunningGateway;
let replicaB: RunningGateway;

beforeAll(async () => {
  replicas = await startReplicasSharingRedis(LIMIT);
  ({ replicaA, replicaB } = replicas);
});

afterAll(() => stopReplicasSharingRedis(replicas));

test('two replicas share one limit: together they admit exactly the limit, then both answer 429 with Retry-After', async () => {
  const { key } = await createProgramWithKey(replicaA);
  const statuses: number[] = [];
  const remainingByReplica = new Map<RunningGateway, number[]>([
    [replicaA, []],
    [replicaB, []],
  ]);
  for (let attempt = 0; attempt < LIMIT.points + 24; attempt += 1) {
    const replica = attempt % 2 === 0 ? replicaA : replicaB;
    const response = await request(replica.url).get('/api/v1/coupons').set(bearer(key));
    statuses.push(response.status);
    expect(response.headers['ratelimit-limit']).toBe(String(LIMIT.points));
    if (response.status === 200) remainingByReplica.get(replica)?.push(Number(response.headers['ratelimit-remaining']));
    if (response.status === 429) {
      expect(response.headers['ratelimit-remaining']).toBe('0');
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(LIMIT.duration);
      expect(response.body).toMatchObject({ code: 'rate_limited' });
    }
  }
  // What a replica reserved and had not spent was spent by its next requests: nothing lost, nothing over.
  expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT.points);
  expect(statuses.slice(-4)).toEqual([429, 429, 429, 429]);
  // Each replica's RateLimit-Remaining only goes down, and never reads more than the limit leaves after that replica's own
  // requests (it counts what the other reserved as spent; it may read more than is left across both, never less than 0).
  for (const remaining of remainingByReplica.values()) {
    expect(remaining).toEqual([...remaining].sort((a, b) => b - a));
    remaining.forEach((left, index) => expect(left).toBeLessThanOrEqual(LIMIT.points - 1 - index));
  }
}, 180_000);

test('a replica counts a large limit in shares reserved from Redis, not one Redis command per request', async () => {
  const { key } = await createProgramWithKey(replicaA, { rateLimit: { points: 100_000, duration: 600 } });
  const client = new Redis(replicas.redis.url);
  const commandsProcessed = async () => Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))?.[1]);
  try {
    const before = await commandsProcessed();
    for (let attempt = 0; attempt < 40; attempt += 1) await request(replicaA.url).get('/api/v1/links').set(bearer(key)).expect(200);
    const after = await commandsProcessed();
    // One share of 1,000 requests (a few commands to reserve it) covers all 40.
    expect(after - before).toBeLessThan(40);
  } finally {
    client.disconnect();
  }
});

test('a changed limit takes effect at once, even while a share of the old one is held', async () => {
  const { programId, key } = await createProgramWithKey(replicaA, { rateLimit: { points: 640, duration: 3600 } });
  // The first request reserves a share of the old limit (40 requests), 39 of them still held by this replica.
  const first = await request(replicaA.url).get('/api/v1/referrals').set(bearer(key)).expect(200);
  expect(first.headers['ratelimit-limit']).toBe('640');
  await request(replicaA.url)
    .put(`/admin/v1/programs/${programId}`)
    .set(adminAuth)
    .send({ rateLimit: { points: 3, duration: 600 } })
    .expect(200);
  // The replica sees the new limit once its key cache is refreshed; the request that shows it is the first counted against it.
  const firstUnderNewLimit = await eventually(
    async () => {
      const response = await request(replicaA.url).get('/api/v1/referrals').set(bearer(key)).expect(200);
      expect(response.headers['ratelimit-limit']).toBe('3');
      return response;
    },
    30_000,
    200,
  );
  expect(firstUnderNewLimit.headers['ratelimit-remaining']).toBe('2');
  for (const remaining of ['1', '0']) {
    const response = await request(replicaA.url).get('/api/v1/referrals').set(bearer(key)).expect(200);
    expect(response.headers['ratelimit-remaining']).toBe(remaining);
  }
  // The new limit is used up: refused, with the new window's Retry-After, not the old hour's.
  const refused = await request(replicaA.url).get('/api/v1/referrals').set(bearer(key)).expect(429);
  expect(refused.headers['ratelimit-limit']).toBe('3');
  expect(refused.headers['ratelimit-remaining']).toBe('0');
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(600);
  expect(refused.body).toMatchObject({ code: 'rate_limited' });
}, 180_000);
