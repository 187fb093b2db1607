import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { hashApiKey } from '../src/admin/api-keys';
import type { RunningGateway } from '../src/gateway';
import { allUpstreams, bearer, startEchoUpstream, startGateway, testGatewaySettings, type EchoUpstream } from './support';

/**
 * BOOTSTRAP_API_KEY when gateways start together or after a crash: every start comes up, and there
 * is one demo program with one key. A taken key, whether the program's or the key's, is the store's
 * one typed conflict and means "already there".
 */
let upstream: EchoUpstream;

beforeAll(async () => {
  upstream = await startEchoUpstream();
});

afterAll(async () => {
  await upstream.stop();
});

const newBootstrapKey = () => `ak_demo_race_${randomUUID().replace(/-/g, '')}`;

test('gateways started together with a new BOOTSTRAP_API_KEY all come up, with exactly one demo program and one key', async () => {
  for (let round = 0; round < 3; round += 1) {
    const key = newBootstrapKey();
    const dbName = testGatewaySettings().dbName;
    const boots = await Promise.allSettled(
      Array.from({ length: 3 }, () => startGateway({ dbName, bootstrapApiKey: key, upstreams: allUpstreams(upstream.url) })),
    );
    const started = boots.flatMap((boot) => (boot.status === 'fulfilled' ? [boot.value] : []));
    try {
      expect(boots.map((boot) => (boot.status === 'rejected' ? String(boot.reason) : 'up'))).toEqual(['up', 'up', 'up']);
      const [first] = started as [RunningGateway];
      expect(await first.store.apiKeys.countDocuments({ keyHash: hashApiKey(key) })).toBe(1);
      expect(await first.connection.collection('programs').countDocuments({})).toBe(1);
      const programIds = new Set<string>();
      for (const gateway of started) {
        const answer = await request(gateway.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
        programIds.add(answer.body.headers['x-program-id']);
      }
      expect(programIds.size).toBe(1);
    } finally {
      await Promise.all(started.map((gateway) => gateway.stop()));
    }
  }
});

test('a start after a crash between creating the demo program and its key creates the key and comes up', async () => {
  const key = newBootstrapKey();
  const first = await startGateway({ bootstrapApiKey: key, upstreams: allUpstreams(upstream.url) });
  const dbName = first.connection.name;
  const programId = (await request(first.url).get('/api/v1/coupons').set(bearer(key)).expect(200)).body.headers['x-program-id'];
  // What the crash leaves: the program, without its key.
  await first.store.apiKeys.deleteOne({ keyHash: hashApiKey(key) });
  await first.stop();

  const restarted = await startGateway({ dbName, bootstrapApiKey: key, upstreams: allUpstreams(upstream.url) });
  try {
    const answer = await request(restarted.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
    expect(answer.body.headers['x-program-id']).toBe(programId);
    expect(await restarted.connection.collection('programs').countDocuments({})).toBe(1);
  } finally {
    await restarted.stop();
  }
});
