import { eventually } from '@affiliate/platform/testing';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import {
  allUpstreams,
  bearer,
  createProgramWithKey,
  DEAD_UPSTREAM,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type ProgramWithKey,
} from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;
let program: ProgramWithKey;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: { ...allUpstreams(upstream.url), sale: DEAD_UPSTREAM } });
  program = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

const api = () => request(gateway.url);
const calls = (path: string) => upstream.received.filter((received) => received.url === path).length;

test('a retried POST with the same Idempotency-Key is answered from the first response, without calling the service again', async () => {
  const before = calls('/coupons');
  const first = await api()
    .post('/api/v1/coupons')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'order-1')
    .send({ name: 'Once' })
    .expect(200);
  const retry = await api()
    .post('/api/v1/coupons')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'order-1')
    .send({ name: 'Once' })
    .expect(200);
  expect(retry.body).toEqual(first.body);
  expect(retry.headers['content-type']).toBe(first.headers['content-type']);
  expect(retry.headers.location).toBe('/somewhere');
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  expect(calls('/coupons')).toBe(before + 1);
});

test('the same key with a different body is 409', async () => {
  await api().post('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', 'order-2').send({ name: 'First' }).expect(200);
  const response = await api()
    .post('/api/v1/coupons')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'order-2')
    .send({ name: 'Second' })
    .expect(409);
  expect(response.body).toMatchObject({ error: expect.stringContaining('different request') });
  // The same key on another endpoint is another request too.
  await api().post('/api/v1/affiliates').set(bearer(program.key)).set('Idempotency-Key', 'order-2').send({ name: 'First' }).expect(409);
});

test('a duplicate arriving while the first is still in flight is 409, and the service sees one request', async () => {
  upstream.answerWith(null);
  const before = calls('/promotional-codes');
  const first = api()
    .post('/api/v1/promotional-codes')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'slow-1')
    .send({ code: 'A' })
    .then((response) => response);
  await waitFor(() => calls('/promotional-codes') === before + 1);
  const duplicate = await api()
    .post('/api/v1/promotional-codes')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'slow-1')
    .send({ code: 'A' })
    .expect(409);
  expect(duplicate.body).toMatchObject({ error: expect.stringContaining('still being processed') });
  upstream.answerWith(200);
  // The hung first request ends with the gateway's timeout. The service may still be doing it, so its
  // key stays taken: a retry is not run a second time.
  expect((await first).status).toBe(503);
  await api().post('/api/v1/promotional-codes').set(bearer(program.key)).set('Idempotency-Key', 'slow-1').send({ code: 'A' }).expect(409);
  expect(calls('/promotional-codes')).toBe(before + 1);
});

test("a request the service answers after the gateway's timeout: the client gets 503, and a retry with the same key gets the service's answer, without a second call", async () => {
  upstream.answerAfter(4500); // past the gateway's upstream timeout (3 s), before its hold on the call ends (6 s)
  try {
    const before = calls('/coupons');
    const first = await api().post('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', 'late-1').send({ name: 'Late' });
    expect(first.status).toBe(503);
    expect(first.body.error).toContain('a retry with the same Idempotency-Key receives its answer');
    // Before the answer has come, the retry is told to come back.
    const early = await api().post('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', 'late-1').send({ name: 'Late' });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('idempotency_key_in_use');
    const replay = await eventually(async () => {
      const retry = await api().post('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', 'late-1').send({ name: 'Late' });
      expect(retry.status).toBe(200);
      return retry;
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(replay.body.body)).toEqual({ name: 'Late' });
    expect(calls('/coupons')).toBe(before + 1);
  } finally {
    upstream.answerAfter(0);
  }
});

test("a call that goes on for its kept answer keeps its place in the program's in-flight cap until the answer is in (after its deadline, and after its client left)", async () => {
  const capped = await startGateway({ upstreams: allUpstreams(upstream.url), upstreamMaxInFlightPerProgram: 1 });
  try {
    const own = await createProgramWithKey(capped);
    const post = () =>
      request(capped.url).post('/api/v1/coupons').set(bearer(own.key)).set('Idempotency-Key', 'held-1').send({ name: 'Held' });
    upstream.answerAfter(4500);
    expect((await post()).status).toBe(503);
    upstream.answerAfter(0);
    // The first call still holds the program's one place: a second is refused, not sent.
    const second = await request(capped.url).get('/api/v1/coupons').set(bearer(own.key));
    expect(second.status).toBe(503);
    expect(second.body.error).toContain('already has 1 requests in flight');
    // Once its answer is in, the place is free again, and the retry gets that answer.
    await eventually(async () => expect((await request(capped.url).get('/api/v1/coupons').set(bearer(own.key))).status).toBe(200));
    expect((await post()).headers['idempotent-replayed']).toBe('true');

    // The same for a call whose client left before the answer.
    const posted = () => upstream.received.filter((received) => received.method === 'POST' && received.url === '/coupons').length;
    const before = posted();
    upstream.answerAfter(2000);
    await postThenLeave(capped.url, own.key, '/coupons', 'held-2', { name: 'Held too' }, () => posted() === before + 1);
    upstream.answerAfter(0);
    expect((await request(capped.url).get('/api/v1/coupons').set(bearer(own.key))).status).toBe(503);
    await eventually(async () => expect((await request(capped.url).get('/api/v1/coupons').set(bearer(own.key))).status).toBe(200));
  } finally {
    upstream.answerAfter(0);
    await capped.stop();
  }
});

test('a client that leaves before the answer: the answer is kept, and a retry with the same key gets it without a second call', async () => {
  upstream.answerAfter(1000);
  try {
    const before = calls('/referrals');
    await postThenLeave(
      gateway.url,
      program.key,
      '/referrals',
      'left-1',
      { email: 'left@example.com' },
      () => calls('/referrals') === before + 1,
    );
    const replay = await eventually(async () => {
      const retry = await api()
        .post('/api/v1/referrals')
        .set(bearer(program.key))
        .set('Idempotency-Key', 'left-1')
        .send({ email: 'left@example.com' });
      expect(retry.status).toBe(200);
      return retry;
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(calls('/referrals')).toBe(before + 1);
  } finally {
    upstream.answerAfter(0);
  }
});

test('keys are scoped per program: another program may use the same key', async () => {
  const other = await createProgramWithKey(gateway);
  const mine = await api()
    .post('/api/v1/links')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'shared-key')
    .send({ link: 'a' })
    .expect(200);
  const theirs = await api()
    .post('/api/v1/links')
    .set(bearer(other.key))
    .set('Idempotency-Key', 'shared-key')
    .send({ link: 'b' })
    .expect(200);
  expect(mine.body.headers['x-program-id']).toBe(program.programId);
  expect(theirs.body.headers['x-program-id']).toBe(other.programId);
  const replay = await api()
    .post('/api/v1/links')
    .set(bearer(other.key))
    .set('Idempotency-Key', 'shared-key')
    .send({ link: 'b' })
    .expect(200);
  expect(replay.body).toEqual(theirs.body);
});

test('client errors of a request that ran are kept and replayed; a failure to reach the service is not', async () => {
  upstream.answerWith(404);
  try {
    await api().post('/api/v1/clicks').set(bearer(program.key)).set('Idempotency-Key', 'gone-1').send({}).expect(404);
  } finally {
    upstream.answerWith(200);
  }
  const replay = await api().post('/api/v1/clicks').set(bearer(program.key)).set('Idempotency-Key', 'gone-1').send({}).expect(404);
  expect(replay.headers['idempotent-replayed']).toBe('true');

  await api().post('/api/v1/sales').set(bearer(program.key)).set('Idempotency-Key', 'down-1').send({ totalEarned: 10 }).expect(503);
  const stored = await gateway.connection.collection('idempotency_keys').countDocuments({ key: 'down-1' });
  expect(stored).toBe(0);
});

test('a request refused as invalid (400) leaves its key unused: the corrected request with that key runs', async () => {
  upstream.answerWith(400);
  try {
    await api()
      .post('/api/v1/coupons')
      .set(bearer(program.key))
      .set('Idempotency-Key', 'fix-me-1')
      .send({ name: 'x', percentOff: 150 })
      .expect(400);
  } finally {
    upstream.answerWith(200);
  }
  const corrected = await api()
    .post('/api/v1/coupons')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'fix-me-1')
    .send({ name: 'x', percentOff: 15 })
    .expect(200);
  expect(corrected.headers['idempotent-replayed']).toBeUndefined();
  const replay = await api()
    .post('/api/v1/coupons')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'fix-me-1')
    .send({ name: 'x', percentOff: 15 })
    .expect(200);
  expect(replay.headers['idempotent-replayed']).toBe('true');
});

test('the record expires after 24 hours and is stored with the program', async () => {
  await api().post('/api/v1/referrals').set(bearer(program.key)).set('Idempotency-Key', 'ttl-1').send({ email: 'a@b.example' }).expect(200);
  const record = await gateway.connection.collection('idempotency_keys').findOne({ key: 'ttl-1' });
  expect(record).toMatchObject({ programId: program.programId, state: 'completed' });
  const indexes = await gateway.connection.collection('idempotency_keys').indexes();
  expect(indexes.find((index) => index.expireAfterSeconds !== undefined)?.expireAfterSeconds).toBe(86_400);
  // Aged past the window, the key is free again (whether or not the server honours TTL indexes).
  await gateway.connection
    .collection('idempotency_keys')
    .updateOne({ key: 'ttl-1' }, { $set: { createdAt: new Date(Date.now() - 25 * 3600 * 1000) } });
  const fresh = await api()
    .post('/api/v1/referrals')
    .set(bearer(program.key))
    .set('Idempotency-Key', 'ttl-1')
    .send({ email: 'other@b.example' })
    .expect(200);
  expect(fresh.headers['idempotent-replayed']).toBeUndefined();
});

test('Idempotency-Key is only for writes (a GET is not kept), and must be 1 to 255 printable characters', async () => {
  const first = await api().get('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', 'get-1').expect(200);
  const second = await api().get('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', 'get-1').expect(200);
  expect(second.body.sequence).toBeGreaterThan(first.body.sequence);
  await api().post('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', 'k'.repeat(256)).send({}).expect(400);
  await api().post('/api/v1/coupons').set(bearer(program.key)).set('Idempotency-Key', '').send({}).expect(400);
});

/** A keyed POST whose client goes away once the service has received it (`arrived`), before any answer. */
async function postThenLeave(gatewayUrl: string, key: string, path: string, idempotencyKey: string, body: object, arrived: () => boolean) {
  const leaving = new AbortController();
  const abandoned = fetch(`${gatewayUrl}/api/v1${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', 'Idempotency-Key': idempotencyKey },
    body: JSON.stringify(body),
    signal: leaving.signal,
  });
  await waitFor(arrived);
  leaving.abort();
  await expect(abandoned).rejects.toThrow();
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('the same fields in another order and with other spacing are the same request: replayed, not 409', async () => {
  const before = calls('/coupons');
  const compact = '{"name":"Spring","percentOff":20,"metadata":{"a":"1","b":"2"}}';
  const reordered = '{\n  "percentOff": 20.0,\n  "metadata": { "b": "2", "a": "1" },\n  "name": "Spring"\n}';
  const send = (body: string) =>
    api()
      .post('/api/v1/coupons')
      .set(bearer(program.key))
      .set('Idempotency-Key', 'canonical-1')
      .set('content-type', 'application/json')
      .send(body);
  const first = await send(compact).expect(200);
  const retry = await send(reordered).expect(200);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(retry.body).toEqual(first.body);
  expect(calls('/coupons')).toBe(before + 1);
});

test('a retry while the first request is still running is told when to come back (409 with Retry-After)', async () => {
  upstream.answerWith(null);
  try {
    const before = calls('/referrals');
    const first = api()
      .post('/api/v1/referrals')
      .set(bearer(program.key))
      .set('Idempotency-Key', 'slow-2')
      .send({ email: 'a@example.com' })
      .then((response) => response);
    await waitFor(() => calls('/referrals') === before + 1);
    const duplicate = await api()
      .post('/api/v1/referrals')
      .set(bearer(program.key))
      .set('Idempotency-Key', 'slow-2')
      .send({ email: 'a@example.com' })
      .expect(409);
    expect(duplicate.body.error).toContain('still being processed');
    expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    upstream.answerWith(200);
    await first;
  } finally {
    upstream.answerWith(200);
  }
});

test('an Idempotency-Key on PUT and on DELETE is honoured as on POST', async () => {
  for (const method of ['put', 'delete'] as const) {
    const before = calls('/affiliates');
    const send = (body: object) =>
      api()[method]('/api/v1/affiliates').set(bearer(program.key)).set('Idempotency-Key', `honoured-${method}`).send(body);
    const first = await send({ affiliateId: '00000000-0000-4000-8000-000000000001' }).expect(200);
    const retry = await send({ affiliateId: '00000000-0000-4000-8000-000000000001' }).expect(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(calls('/affiliates')).toBe(before + 1);
    await send({ affiliateId: '00000000-0000-4000-8000-000000000002' }).expect(409);
  }
});

test("an Idempotency-Key is honoured on the gateway's own writes: a retried POST /publishable-keys answers the same key (replayed) and creates no second one; PUT /program and DELETE /publishable-keys replay too; another body is 409", async () => {
  const own = await createProgramWithKey(gateway);
  const as = (key: string) => ({ ...bearer(own.key), 'Idempotency-Key': key });
  const keysNow = async () => (await api().get('/api/v1/publishable-keys').set(bearer(own.key)).expect(200)).body as { id: string }[];

  const created = await api().post('/api/v1/publishable-keys').set(as('pk-1')).expect(200);
  const retried = await api().post('/api/v1/publishable-keys').set(as('pk-1')).expect(200);
  expect(created.headers['idempotent-replayed']).toBeUndefined();
  expect(retried.headers['idempotent-replayed']).toBe('true');
  expect(retried.body).toEqual(created.body);
  expect((await keysNow()).map((key) => key.id)).toEqual([created.body.id]);
  // The same key with a body is another request.
  await api().post('/api/v1/publishable-keys').set(as('pk-1')).send({ note: 'other' }).expect(409);

  const settings = (reportingCurrency: string) => api().put('/api/v1/program').set(as('settings-1')).send({ reportingCurrency });
  const updated = await settings('EUR').expect(200);
  const replayed = await settings('EUR').expect(200);
  expect(replayed.headers['idempotent-replayed']).toBe('true');
  expect(replayed.body).toEqual(updated.body);
  // Another body under the same key is refused, and changes nothing.
  const refused = await settings('GBP').expect(409);
  expect(refused.body.error).toContain('different request');
  expect((await api().get('/api/v1/program').set(bearer(own.key)).expect(200)).body.reportingCurrency).toBe('EUR');

  const revoke = (publishableKeyId: string) => api().delete('/api/v1/publishable-keys').set(as('revoke-1')).send({ publishableKeyId });
  const revoked = await revoke(created.body.id).expect(200);
  const again = await revoke(created.body.id).expect(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(revoked.body);
  await revoke('00000000-0000-4000-8000-000000000009').expect(409);
});
