import { eventually } from '@affiliate/platform/testing';
import request from 'supertest';
import { runAdminCommand } from '../src/cli/admin-commands';
import type { RunningGateway } from '../src/gateway';
import { adminAuth, allUpstreams, bearer, createProgramWithKey, startEchoUpstream, startGateway, type EchoUpstream } from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({
    upstreams: allUpstreams(upstream.url),
    defaultRateLimit: { points: 5, duration: 60 },
    failedAuthLimits: { api: { points: 3, duration: 60 }, admin: { points: 3, duration: 900 } },
  });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

const api = () => request(gateway.url);

test('the rate limit is per route template: made-up paths under one route share one bucket', async () => {
  const { key } = await createProgramWithKey(gateway);
  for (let attempt = 0; attempt < 5; attempt += 1) await api().get(`/api/v1/coupons/made-up-${attempt}`).set(bearer(key)).expect(200);
  const refused = await api().get('/api/v1/coupons/yet-another').set(bearer(key)).expect(429);
  expect(refused.body.error).toContain('GET /api/v1/unmatched');
});

test('HEAD and OPTIONS are counted as GET', async () => {
  const { key } = await createProgramWithKey(gateway);
  for (let attempt = 0; attempt < 3; attempt += 1) await api().get('/api/v1/links').set(bearer(key)).expect(200);
  await api().head('/api/v1/links').set(bearer(key)).expect(200);
  const last = await api().options('/api/v1/links').set(bearer(key));
  expect(last.headers['ratelimit-remaining']).toBe('0');
  await api().head('/api/v1/links').set(bearer(key)).expect(429);
});

test('requests failing authentication are limited per address, and a valid key from that address is still served', async () => {
  // Its own gateway: the failures of the other tests must not count here.
  const own = await startGateway({
    upstreams: allUpstreams(upstream.url),
    failedAuthLimits: { api: { points: 3, duration: 60 }, admin: { points: 3, duration: 900 } },
  });
  try {
    const { key } = await createProgramWithKey(own);
    for (const token of ['ak_live_guess1', 'ak_live_guess2', 'ak_live_guess3'])
      await request(own.url).get('/api/v1/coupons').set(bearer(token)).expect(401);
    const throttled = await request(own.url).get('/api/v1/coupons').set(bearer('ak_live_guess4')).expect(429);
    expect(throttled.body).toMatchObject({ error: expect.stringContaining('Too many failed authentication attempts') });
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    await request(own.url).get('/api/v1/coupons').expect(429); // no credential at all: the same bucket
    await request(own.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
  } finally {
    await own.stop();
  }
});

test('an address over its failed-authentication limit keeps its known valid keys working, while keys it has not shown valid get one lookup per window and the rest are refused unread', async () => {
  const own = await startGateway({
    upstreams: allUpstreams(upstream.url),
    failedAuthLimits: { api: { points: 2, duration: 60 }, admin: { points: 3, duration: 900 } },
  });
  try {
    const { key } = await createProgramWithKey(own);
    const { key: newcomer } = await createProgramWithKey(own);
    // The client behind the shared address (a NAT) has used its key: it is known valid.
    await request(own.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
    for (const token of ['ak_live_guess1', 'ak_live_guess2']) await request(own.url).get('/api/v1/coupons').set(bearer(token)).expect(401);
    await request(own.url).get('/api/v1/coupons').set(bearer('ak_live_guess3')).expect(429);
    // The known key keeps working, however many times, between the guesser's refused keys.
    for (let call = 0; call < 3; call += 1) {
      await request(own.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
      await request(own.url)
        .get('/api/v1/coupons')
        .set(bearer(`ak_live_guess-${call}`))
        .expect(429);
    }
    // The window's one lookup went to the guesser's first key after the limit: a valid key this gateway
    // has not seen is now refused unread, as every unknown key is (it would be served if it were read).
    const refused = await request(own.url).get('/api/v1/coupons').set(bearer(newcomer)).expect(429);
    expect(refused.body).toMatchObject({ error: expect.stringContaining('Too many failed authentication attempts') });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await request(own.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
  } finally {
    await own.stop();
  }
});

test('requests to routes that need no credential are limited per address, the probes and keyed requests excepted', async () => {
  const own = await startGateway({ upstreams: allUpstreams(upstream.url), anonymousRateLimit: { points: 4, duration: 60 } });
  try {
    const { key } = await createProgramWithKey(own);
    await request(own.url).get('/docs').expect(200);
    await request(own.url).get('/api/v1/openapi.json').expect(200);
    await request(own.url).get('/no-such-page').expect(404);
    await request(own.url).get('/no-such-page-either').expect(404);
    for (const path of ['/docs', '/console', '/api/v1/openapi.json', '/another-page']) {
      const refused = await request(own.url).get(path).expect(429);
      expect(refused.body).toMatchObject({ error: expect.stringContaining('Too many requests without a credential from this address') });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    for (let probe = 0; probe < 5; probe += 1) await request(own.url).get('/healthz').expect(200);
    await request(own.url).get('/api/v1/coupons').set(bearer(key)).expect(200);
  } finally {
    await own.stop();
  }
});

test('probes are exempt from per-address limits: an address that used up its limit still gets /healthz and /readyz', async () => {
  const own = await startGateway({ upstreams: allUpstreams(upstream.url), anonymousRateLimit: { points: 2, duration: 60 } });
  try {
    for (let attempt = 0; attempt < 2; attempt += 1) await request(own.url).get('/docs').expect(200);
    await request(own.url).get('/docs').expect(429);
    for (let probe = 0; probe < 5; probe += 1) {
      await request(own.url).get('/readyz').expect(200);
      await request(own.url).get('/healthz').expect(200);
    }
  } finally {
    await own.stop();
  }
});

test('failed admin attempts slow the address down with a Retry-After that grows, and the right token is always accepted', async () => {
  const own = await startGateway({
    upstreams: allUpstreams(upstream.url),
    failedAuthLimits: { api: { points: 60, duration: 60 }, admin: { points: 3, duration: 900 } },
  });
  try {
    for (let attempt = 0; attempt < 3; attempt += 1)
      await request(own.url)
        .get('/admin/v1/programs')
        .set(bearer(`wrong-admin-token-${attempt}`))
        .expect(401);
    const waits: number[] = [];
    for (let attempt = 3; attempt < 7; attempt += 1) {
      const throttled = await request(own.url)
        .get('/admin/v1/programs')
        .set(bearer(`wrong-admin-token-${attempt}`))
        .expect(429);
      expect(throttled.body).toMatchObject({ error: expect.stringContaining('Too many failed authentication attempts') });
      waits.push(Number(throttled.headers['retry-after']));
    }
    expect(waits).toEqual([2, 4, 8, 16]);
    await request(own.url).get('/admin/v1/programs').set(adminAuth).expect(200);
    await request(own.url).post('/admin/v1/programs').set(adminAuth).send({ name: 'Still served' }).expect(200);
  } finally {
    await own.stop();
  }
});

test('/admin/v1 without the right token is behind the per-address limiter; the right token is not', async () => {
  const own = await startGateway({
    upstreams: allUpstreams(upstream.url),
    anonymousRateLimit: { points: 3, duration: 60 },
    failedAuthLimits: { api: { points: 60, duration: 60 }, admin: { points: 1000, duration: 900 } },
  });
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) await request(own.url).get('/admin/v1/programs').expect(401);
    const refused = await request(own.url).get('/admin/v1/programs').set(bearer('wrong-admin-token')).expect(429);
    expect(refused.body).toMatchObject({ error: expect.stringContaining('Too many requests without a credential from this address') });
    await request(own.url).get('/docs').expect(429); // the same per-address bucket
    for (let attempt = 0; attempt < 5; attempt += 1) await request(own.url).get('/admin/v1/programs').set(adminAuth).expect(200);
  } finally {
    await own.stop();
  }
});

test('refused admin attempts are counted in one audit record per address and window, so a flood cannot grow the record', async () => {
  const own = await startGateway({
    upstreams: allUpstreams(upstream.url),
    failedAuthLimits: { api: { points: 60, duration: 60 }, admin: { points: 1000, duration: 900 } },
  });
  try {
    const flood = Array.from({ length: 40 }, (_, attempt) =>
      request(own.url)
        .delete(`/admin/v1/programs/p-${attempt}`)
        .set(bearer(`wrong-${attempt}`))
        .expect(401),
    );
    await Promise.all(flood);
    const refusals = await eventually(async () => {
      const response = await request(own.url).get('/admin/v1/audit-records').set(adminAuth).expect(200);
      const refused = (response.body as (Audit & { count: number })[]).filter((record) => record.actor.credential === 'refused');
      expect(refused.map((record) => record.count)).toEqual([40]);
      return refused;
    });
    expect(refusals[0]).toMatchObject({
      action: 'DELETE /admin/v1/programs/{id}',
      status: 401,
      actor: { address: expect.stringContaining('127.0.0.1') },
    });
    expect(await own.store.auditRecords.countDocuments({})).toBe(1);
  } finally {
    await own.stop();
  }
});

test('audit records are deleted once older than the retention setting, where the database runs no TTL monitor too', async () => {
  const own = await startGateway({ upstreams: allUpstreams(upstream.url), auditRetentionMs: 3000, auditSweepIntervalMs: 100 });
  try {
    const { key } = await createProgramWithKey(own);
    await request(own.url).get('/api/v1/webhook-endpoints/secret').set(bearer(key)).expect(200);
    await eventually(async () => {
      expect(await own.store.auditRecords.countDocuments({})).toBeGreaterThan(0);
      await request(own.url)
        .get('/api/v1/audit-records')
        .set(bearer(key))
        .expect(200)
        .expect((response) => expect(response.body).toHaveLength(1));
    });
    await eventually(async () => {
      await request(own.url).get('/admin/v1/audit-records').set(adminAuth).expect(200, []);
      await request(own.url).get('/api/v1/audit-records').set(bearer(key)).expect(200, []);
    }, 15_000);
  } finally {
    await own.stop();
  }
});

type Audit = {
  action: string;
  targetId: string | null;
  status: number;
  actor: { credential: string; address: string | null; user: string | null };
};

test('admin changes and refused admin attempts are written to the audit record (who, what, when); reads are not', async () => {
  const program = await api()
    .post('/admin/v1/programs')
    .set(adminAuth)
    .set('user-agent', 'ops-laptop')
    .send({ name: 'Audited' })
    .expect(200);
  const key = await api().post(`/admin/v1/programs/${program.body.id}/api-keys`).set(adminAuth).expect(200);
  await api().delete(`/admin/v1/api-keys/${key.body.id}`).set(adminAuth).expect(200);
  await api().put(`/admin/v1/programs/${program.body.id}`).set(adminAuth).send({ apiAccess: 'yes' }).expect(400);
  await api().get(`/admin/v1/programs/${program.body.id}`).set(adminAuth).expect(200);
  await api().delete(`/admin/v1/programs/${program.body.id}`).set(bearer('not-the-admin-token')).expect(401);

  const records = await eventually(async () => {
    const response = await api().get('/admin/v1/audit-records?limit=20').set(adminAuth).expect(200);
    const ours = (response.body as Audit[]).filter((record) => record.targetId === program.body.id || record.targetId === key.body.id);
    expect(ours).toHaveLength(5);
    return ours;
  });
  expect(records.map(({ action, targetId, status, actor }) => ({ action, targetId, status, credential: actor.credential }))).toEqual([
    { action: 'DELETE /admin/v1/programs/{id}', targetId: program.body.id, status: 401, credential: 'refused' },
    { action: 'PUT /admin/v1/programs/{id}', targetId: program.body.id, status: 400, credential: 'admin-token' },
    { action: 'DELETE /admin/v1/api-keys/{id}', targetId: key.body.id, status: 200, credential: 'admin-token' },
    { action: 'POST /admin/v1/programs/{id}/api-keys', targetId: program.body.id, status: 200, credential: 'admin-token' },
    { action: 'POST /admin/v1/programs', targetId: program.body.id, status: 200, credential: 'admin-token' },
  ]);
  expect(records[4]?.actor).toMatchObject({ address: expect.stringContaining('127.0.0.1'), userAgent: 'ops-laptop' });
  expect(JSON.stringify(records)).not.toContain(key.body.key);
});

test('admin CLI changes are written to the audit record with the host user', async () => {
  const created = (await runAdminCommand(['create-program', '--name', 'CLI audited'], gateway.store)) as { program: { id: string } };
  const response = await api().get('/admin/v1/audit-records?limit=10').set(adminAuth).expect(200);
  const entry = (response.body as Audit[]).find((record) => record.targetId === created.program.id);
  expect(entry).toMatchObject({
    action: 'cli create-program',
    status: 200,
    actor: { credential: 'cli', user: expect.any(String), address: null },
  });
});
