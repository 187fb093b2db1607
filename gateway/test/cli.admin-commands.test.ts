import { eventually } from '@affiliate/platform/testing';
import request from 'supertest';
import { describeFailure, runAdminCommand, UsageError } from '../src/cli/admin-commands';
import type { RunningGateway } from '../src/gateway';
import { allUpstreams, bearer, startEchoUpstream, startGateway, type EchoUpstream } from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url) });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

type Created = {
  program: { id: string; name: string; urlModifier: string; rateLimit: unknown; apiAccess: boolean };
  apiKey: { id: string; key: string };
};

test('create-program prints the program and its first key, which works right away', async () => {
  const created = (await runAdminCommand(
    [
      'create-program',
      '--name',
      'CLI shop',
      '--url-modifier',
      'via',
      '--destination-url',
      'https://shop.example/',
      '--rate-limit',
      '50/10',
      '--commission-rate',
      '15',
    ],
    gateway.store,
  )) as Created;
  expect(created.program).toMatchObject({ name: 'CLI shop', urlModifier: 'via', rateLimit: { points: 50, duration: 10 }, apiAccess: true });
  expect(created.apiKey.key).toMatch(/^ak_live_/);
  const response = await request(gateway.url).get('/api/v1/coupons').set(bearer(created.apiKey.key)).expect(200);
  expect(response.body.headers['x-program-id']).toBe(created.program.id);
  expect(response.headers['ratelimit-limit']).toBe('50');
});

test('create-key, list-programs and revoke-key; a revoked key stops working within seconds', async () => {
  const { program } = (await runAdminCommand(['create-program', '--name', 'Second'], gateway.store)) as Created;
  const { apiKey } = (await runAdminCommand(['create-key', '--program', program.id], gateway.store)) as Created;
  await request(gateway.url).get('/api/v1/links').set(bearer(apiKey.key)).expect(200);

  const listed = (await runAdminCommand(['list-programs'], gateway.store)) as {
    id: string;
    apiKeys: { id: string; revokedAt: string | null }[];
  }[];
  const mine = listed.find((entry) => entry.id === program.id);
  expect(mine?.apiKeys.map((key) => key.id)).toContain(apiKey.id);
  expect(JSON.stringify(listed)).not.toContain(apiKey.key);

  expect(await runAdminCommand(['revoke-key', '--key', apiKey.id], gateway.store)).toEqual({ id: apiKey.id, revoked: true });
  // The CLI writes to the database only; the gateway notices within its key cache lifetime.
  await eventually(() => request(gateway.url).get('/api/v1/links').set(bearer(apiKey.key)).expect(401), 5000, 200);
});

test('bad arguments are explained, not crashed on', async () => {
  await expect(runAdminCommand(['create-program'], gateway.store)).rejects.toThrow(/name is required/);
  await expect(runAdminCommand(['create-program', '--name', 'x', '--rate-limit', 'lots'], gateway.store)).rejects.toThrow(/rateLimit/);
  await expect(runAdminCommand(['create-key', '--program', '00000000-0000-4000-8000-000000000000'], gateway.store)).rejects.toThrow(
    /No program/,
  );
  await expect(runAdminCommand(['frobnicate'], gateway.store)).rejects.toBeInstanceOf(UsageError);
  await expect(runAdminCommand(['create-key', '--bogus'], gateway.store)).rejects.toBeInstanceOf(UsageError);
  expect(describeFailure(new UsageError('Unknown command: frobnicate'))).toContain('Usage: npm run admin');
});

test('create-key --scopes makes a key limited to those scopes; an unknown scope is refused and makes no key', async () => {
  const { program } = (await runAdminCommand(['create-program', '--name', 'Scoped'], gateway.store)) as Created;
  const { apiKey } = (await runAdminCommand(
    ['create-key', '--program', program.id, '--scopes', 'read,finance'],
    gateway.store,
  )) as Created & { apiKey: { scopes: string[] } };
  expect(apiKey.scopes).toEqual(['read', 'finance']);
  await request(gateway.url).get('/api/v1/payouts/export').set(bearer(apiKey.key)).expect(200);
  const refused = await request(gateway.url).post('/api/v1/coupons').set(bearer(apiKey.key)).send({}).expect(403);
  expect(refused.body.error).toContain('"write"');
  await expect(runAdminCommand(['create-key', '--program', program.id, '--scopes', 'read,everything'], gateway.store)).rejects.toThrow(
    /scopes/,
  );
  const listed = (await runAdminCommand(['list-programs'], gateway.store)) as { id: string; apiKeys: unknown[] }[];
  expect(listed.find((entry) => entry.id === program.id)?.apiKeys).toHaveLength(2);
});
