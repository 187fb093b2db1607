import { randomBytes, randomUUID } from 'node:crypto';
import { MAX_WEBHOOK_ENDPOINTS_HEADER, parseConfig, type RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import request from 'supertest';
import { dispatcherConfigShape, dispatcherSettings, LOCAL_WEBHOOK_SECRET_ENCRYPTION_KEY } from '../src/config';
import { bootDispatcher, createEndpoint, testDispatcherSettings } from './support/dispatcher';

let service: RunningService;
const url = 'http://127.0.0.1:9/webhooks';

beforeAll(async () => {
  service = await bootDispatcher();
});
afterAll(() => service.stop());

const api = () => request(service.server);
const endpoints = () => service.context.connection.collection('webhook_endpoints');
const secretOf = async (target: RunningService, programId: string, id: string) =>
  (
    await request(target.server)
      .get('/webhook-endpoints/secret')
      .query({ webhookEndpointId: id })
      .set(internalHeaders(programId))
      .expect(200)
  ).body.secret as string;

test('signing secrets are encrypted at rest: the database holds neither the secret nor the rotated one, and the API still reveals them', async () => {
  const programId = newProgramId();
  const created = await createEndpoint(service, programId, { url, eventTypes: ['sale.created'] });
  const stored = await endpoints().findOne({ _id: created.id as never });
  expect(stored?.secret).toMatch(/^enc:v1:/);
  expect(JSON.stringify(stored)).not.toContain(created.secret.slice('whsec_'.length));
  expect(await secretOf(service, programId, created.id)).toBe(created.secret);

  const rotated = await api()
    .put('/webhook-endpoints')
    .set(internalHeaders(programId))
    .send({ webhookEndpointId: created.id, rotateSecret: true })
    .expect(200);
  const afterRotation = JSON.stringify(await endpoints().findOne({ _id: created.id as never }));
  for (const secret of [created.secret, rotated.body.secret as string]) expect(afterRotation).not.toContain(secret.slice('whsec_'.length));
  expect(await secretOf(service, programId, created.id)).toBe(rotated.body.secret);
});

test('a secret stored in plain text before encryption is still read, sealed by the next write, and every one left is sealed at start', async () => {
  const programId = newProgramId();
  const plain = (secret: string) => ({
    _id: randomUUID(),
    programId,
    url,
    eventTypes: ['*'],
    description: null,
    active: true,
    disabledReason: null,
    secret,
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  });
  const [written, untouched] = [plain(`whsec_${randomBytes(24).toString('base64')}`), plain(`whsec_${randomBytes(24).toString('base64')}`)];
  await endpoints().insertMany([written, untouched] as never[]);
  expect(await secretOf(service, programId, written._id)).toBe(written.secret);

  await api()
    .put('/webhook-endpoints')
    .set(internalHeaders(programId))
    .send({ webhookEndpointId: written._id, description: 'changed' })
    .expect(200);
  expect((await endpoints().findOne({ _id: written._id as never }))?.secret).toMatch(/^enc:v1:/);
  expect(await secretOf(service, programId, written._id)).toBe(written.secret);

  const restarted = await bootDispatcher(
    testDispatcherSettings(),
    testServiceSettings('webhook-dispatcher', { dbName: service.context.connection.name }),
  );
  try {
    expect((await endpoints().findOne({ _id: untouched._id as never }))?.secret).toMatch(/^enc:v1:/);
    expect(await secretOf(restarted, programId, untouched._id)).toBe(untouched.secret);
  } finally {
    await restarted.stop();
  }
});

test('a program has at most its maxWebhookEndpoints endpoints: the next is a 400 naming the limit, and deleting one frees a place', async () => {
  const programId = newProgramId();
  const withCap = (cap: number) => ({ ...internalHeaders(programId), [MAX_WEBHOOK_ENDPOINTS_HEADER]: String(cap) });
  const made: string[] = [];
  for (let index = 0; index < 3; index += 1)
    made.push(
      (
        await api()
          .post('/webhook-endpoints')
          .set(withCap(3))
          .send({ url, eventTypes: ['*'] })
          .expect(200)
      ).body.id,
    );
  const refused = await api()
    .post('/webhook-endpoints')
    .set(withCap(3))
    .send({ url, eventTypes: ['*'] })
    .expect(400);
  expect(refused.body.error).toMatch(/limit of 3 webhook endpoints \(maxWebhookEndpoints\)/);
  const listed = await api().get('/webhook-endpoints').set(internalHeaders(programId)).expect(200);
  expect(listed.body).toHaveLength(3);

  await api().delete('/webhook-endpoints').set(internalHeaders(programId)).send({ webhookEndpointId: made[0] }).expect(200);
  await api()
    .post('/webhook-endpoints')
    .set(withCap(3))
    .send({ url, eventTypes: ['*'] })
    .expect(200);
  await api()
    .post('/webhook-endpoints')
    .set(withCap(3))
    .send({ url, eventTypes: ['*'] })
    .expect(400);
  // Another program has its own count.
  await api()
    .post('/webhook-endpoints')
    .set({ ...internalHeaders(newProgramId()), [MAX_WEBHOOK_ENDPOINTS_HEADER]: '1' })
    .send({ url, eventTypes: ['*'] })
    .expect(200);
});

test('endpoints made before the cap existed count towards it, and racing creations never pass it', async () => {
  const programId = newProgramId();
  const before = Array.from({ length: 15 }, () => ({
    _id: randomUUID(),
    programId,
    url,
    eventTypes: ['*'],
    description: null,
    active: true,
    disabledReason: null,
    secret: `whsec_${randomBytes(24).toString('base64')}`,
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  }));
  await endpoints().insertMany(before as never[]);
  const capped = { ...internalHeaders(programId), [MAX_WEBHOOK_ENDPOINTS_HEADER]: '20' };
  const attempts = await Promise.all(
    Array.from({ length: 10 }, () =>
      api()
        .post('/webhook-endpoints')
        .set(capped)
        .send({ url, eventTypes: ['*'] }),
    ),
  );
  expect(attempts.filter((response) => response.status === 200)).toHaveLength(5);
  expect(attempts.filter((response) => response.status === 400).map((response) => response.body.error)).toEqual(
    Array(5).fill(expect.stringMatching(/limit of 20 webhook endpoints/)),
  );
  expect(await endpoints().countDocuments({ programId })).toBe(20);
});

test('WEBHOOK_SECRET_ENCRYPTION_KEY must be 32 random bytes (hex or base64); production requires it and refuses the shipped one', () => {
  const key = randomBytes(32);
  expect(
    dispatcherSettings(parseConfig(dispatcherConfigShape, { WEBHOOK_SECRET_ENCRYPTION_KEY: key.toString('hex') })).secretEncryptionKey,
  ).toEqual(key);
  expect(
    dispatcherSettings(parseConfig(dispatcherConfigShape, { WEBHOOK_SECRET_ENCRYPTION_KEY: key.toString('base64') })).secretEncryptionKey,
  ).toEqual(key);
  for (const bad of ['too-short', randomBytes(16).toString('hex'), '00'.repeat(32), 'ab'.repeat(32)]) {
    expect(() => parseConfig(dispatcherConfigShape, { WEBHOOK_SECRET_ENCRYPTION_KEY: bad })).toThrow(/WEBHOOK_SECRET_ENCRYPTION_KEY/);
  }
  const production = { NODE_ENV: 'production' };
  const secrets = { required: ['WEBHOOK_SECRET_ENCRYPTION_KEY' as const] };
  expect(() => parseConfig(dispatcherConfigShape, production, secrets)).toThrow(
    /WEBHOOK_SECRET_ENCRYPTION_KEY: required when NODE_ENV=production/,
  );
  expect(() =>
    parseConfig(dispatcherConfigShape, { ...production, WEBHOOK_SECRET_ENCRYPTION_KEY: LOCAL_WEBHOOK_SECRET_ENCRYPTION_KEY }, secrets),
  ).toThrow(/WEBHOOK_SECRET_ENCRYPTION_KEY: is a shipped default/);
});
