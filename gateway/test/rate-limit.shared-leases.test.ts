import Redis from 'ioredis';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { bearer, createProgramWithKey, startReplicasSharingRedis, stopReplicasSharingRedis, type ReplicasSharingRedis } from './support';

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
  // Each replica's RateLimit-Remaining only goes down, and never below what the limit leaves after its own requests.
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
