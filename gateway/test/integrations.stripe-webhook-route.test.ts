import { randomUUID } from 'node:crypto';
import type { RunningGateway } from '../src/gateway';
import { allUpstreams, createProgramWithKey, startEchoUpstream, startGateway, type EchoUpstream, type ProgramWithKey } from './support';

/**
 * The public Stripe webhook route of the gateway (no API key: Stripe's signature authenticates it,
 * in the sale service). What the gateway owes the service: the exact bytes, the program of the URL
 * and its own credential; and nothing at all for a program that does not exist.
 */
let upstream: EchoUpstream;
let gateway: RunningGateway;
let program: ProgramWithKey;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url) });
  program = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

const post = (path: string, body: Buffer, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body });

test('a Stripe webhook is forwarded byte for byte to the sale service, with the program of its URL and the internal credential', async () => {
  // Spacing, key order and escapes a JSON parser would not keep: the signature is over exactly these bytes.
  const bytes = Buffer.from('{"id":"evt_1",  "object":"event","data":{"object":{"name":"J\\u00fcrgen"}}}\n');
  const response = await post(`/integrations/stripe/${program.programId}/webhooks`, bytes, {
    'stripe-signature': 't=1,v1=abc',
    'x-program-id': randomUUID(),
    'x-internal-token': 'forged',
  });
  expect(response.status).toBe(200);
  const forwarded = upstream.received.at(-1)!;
  expect(forwarded.url).toBe('/internal/integrations/stripe/webhooks');
  expect(forwarded.body).toBe(bytes.toString('utf8'));
  expect(forwarded.headers['x-program-id']).toBe(program.programId);
  expect(forwarded.headers['x-internal-token']).not.toBe('forged');
  expect(forwarded.headers['stripe-signature']).toBe('t=1,v1=abc');
});

test('a Stripe webhook for an unknown or malformed program id is 404 and reaches no service', async () => {
  const before = upstream.received.length;
  for (const programId of [randomUUID(), 'not-a-program', '..%2Finternal']) {
    const response = await post(`/integrations/stripe/${programId}/webhooks`, Buffer.from('{}'));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: expect.any(String) });
  }
  expect(upstream.received.length).toBe(before);
});
