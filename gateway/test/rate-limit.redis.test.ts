import Redis from 'ioredis';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import {
  allUpstreams,
  bearer,
  createProgramWithKey,
  startEchoUpstream,
  startGateway,
  startOwnRedis,
  type EchoUpstream,
  type OwnRedis,
} from './support';

let upstream: EchoUpstream;
let redis: OwnRedis;
let replicaA: RunningGateway;
let replicaB: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  redis = await startOwnRedis();
  replicaA = await startGateway({
    upstreams: allUpstreams(upstream.url),
    redisUrl: redis.url,
    defaultRateLimit: { points: 6, duration: 60 },
  });
  // A second replica on the same database and Redis.
  replicaB = await startGateway({
    upstreams: allUpstreams(upstream.url),
    redisUrl: redis.url,
    defaultRateLimit: { points: 6, duration: 60 },
    dbName: replicaA.connection.name,
  });
});

afterAll(async () => {
  await replicaA?.stop();
  await replicaB?.stop();
  await redis?.stop();
  await upstream?.stop();
});

test('replicas share the counters through Redis, and no API key is stored there', async () => {
  const { key } = await createProgramWithKey(replicaA);
  const remaining: string[] = [];
  for (const replica of [replicaA, replicaB, replicaA, replicaB, replicaA, replicaB]) {
    const response = await request(replica.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
    remaining.push(response.headers['ratelimit-remaining'] as string);
  }
  expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
  await request(replicaB.url).get('/api/v1/coupons').set(bearer(key)).expect(429);
  await request(replicaA.url).get('/api/v1/coupons').set(bearer(key)).expect(429);

  const client = new Redis(redis.url);
  try {
    const stored = await client.keys('*');
    expect(stored.length).toBeGreaterThan(0);
    for (const name of stored) {
      expect(name).toMatch(/^gateway:rate:6:60:[A-Za-z0-9_-]+$/);
      expect(name).not.toContain(key);
    }
  } finally {
    client.disconnect();
  }
});

test('with Redis stopped mid-traffic, the in-memory insurance limiter keeps serving and limiting', async () => {
  const { key } = await createProgramWithKey(replicaA);
  await request(replicaA.url).get('/api/v1/links').set(bearer(key)).expect(200);
  await request(replicaA.url).get('/api/v1/links').set(bearer(key)).expect(200);

  // Steady traffic on another route of another replica while Redis goes away under it.
  let trafficRunning = true;
  const trafficStatuses: number[] = [];
  const traffic = (async () => {
    while (trafficRunning) {
      const response = await request(replicaB.url).get('/api/v1/referrals').set(bearer(key));
      trafficStatuses.push(response.status);
    }
  })();
  while (trafficStatuses.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
  await redis.stop();
  while (trafficStatuses.length < 12) await new Promise((resolve) => setTimeout(resolve, 10));
  trafficRunning = false;
  await traffic;
  expect(new Set(trafficStatuses.map((status) => (status === 200 || status === 429 ? 'served' : status)))).toEqual(new Set(['served']));

  const statuses: number[] = [];
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const response = await request(replicaA.url).get('/api/v1/links').set(bearer(key));
    statuses.push(response.status);
    expect(response.headers['ratelimit-limit']).toBe('6');
    if (response.status === 429) expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  }
  // The insurance limiter counts from zero on this replica: six more pass, then it limits.
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  await request(replicaB.url).get('/api/v1/sales').set(bearer(key)).expect(200);
});
