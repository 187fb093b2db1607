import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@affiliate/platform/testing';
import { okBody, System } from '../harness';

type Webhook = {
  id: string;
  event: string;
  data: Record<string, unknown> & { id: string; lastName?: string };
  revision?: number;
  previousAttributes?: Record<string, unknown>;
};

let system: System;
const servers: Server[] = [];

beforeAll(async () => {
  // The harness's schedule, with 20 more steps: a delivery refused on purpose must not run out of
  // retries before the machine, however loaded, has delivered what the refusal waits for.
  system = await System.start({ WEBHOOK_RETRY_SCHEDULE: `0,300ms,500ms,1s,1s,2s,2s,3s,3s${',5s'.repeat(20)}` });
}, 180_000);
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  await system?.stop();
});

/**
 * A subscriber that records what it accepted, in the order it accepted it; `refuse` decides, per
 * request, to answer 503 instead (the dispatcher then retries on its schedule).
 */
async function receiver(refuse: (webhook: Webhook) => boolean = () => false): Promise<{ url: string; accepted: Webhook[] }> {
  const accepted: Webhook[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Webhook;
      if (refuse(webhook)) {
        response.statusCode = 503;
        response.end('not now');
        return;
      }
      accepted.push(webhook);
      response.end('ok');
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, accepted };
}

test('an endpoint with ordering PER_OBJECT receives 20 rapid updates of one affiliate strictly in revision order while its 3rd delivery fails twice, and another affiliate is not held back meanwhile', async () => {
  const { api } = await system.createProgram();
  // Ada's 3rd delivery (revision 2) is refused twice, and then for as long as Grace's later update
  // has not arrived: if that update were held back behind Ada's, it never would, Ada's delivery would
  // run out of retries, and Ada's revisions would not all arrive.
  let refusals = 0;
  const ids = { ada: '', grace: '' };
  const graceUpdated = () =>
    subscriber.accepted.some((webhook) => webhook.data.id === ids.grace && webhook.data.lastName === 'while-ada-fails');
  const subscriber = await receiver((webhook) => {
    if (webhook.data.id !== ids.ada || webhook.revision !== 2 || (refusals >= 2 && graceUpdated())) return false;
    refusals += 1;
    return true;
  });
  const endpoint = await okBody(
    api.post('/webhook-endpoints', { url: subscriber.url, eventTypes: ['affiliate.*'], ordering: 'PER_OBJECT' }),
  );
  expect(endpoint.ordering).toBe('PER_OBJECT');
  const ada = await okBody(api.post('/affiliates', { firstName: 'Ada', lastName: 'v0', email: 'ada@example.com' }));
  const grace = await okBody(api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' }));
  Object.assign(ids, { ada: ada.id, grace: grace.id });

  for (let update = 1; update <= 20; update += 1) await okBody(api.put('/affiliates', { affiliateId: ada.id, lastName: `v${update}` }));
  await eventually(() => expect(refusals).toBeGreaterThanOrEqual(1), 60_000);
  await okBody(api.put('/affiliates', { affiliateId: grace.id, lastName: 'while-ada-fails' }));

  const adas = () => subscriber.accepted.filter((webhook) => webhook.data.id === ada.id);
  // affiliate.created (revision 0, lastName v0), then the 20 updates: each once, in order.
  const all = Array.from({ length: 21 }, (_, index) => index);
  await eventually(() => expect(adas().map((webhook) => webhook.data.lastName)).toEqual(all.map((index) => `v${index}`)), 120_000);
  expect(adas().map((webhook) => webhook.revision)).toEqual(all);
  expect(refusals).toBeGreaterThanOrEqual(2);
  // Grace's update went out while Ada's revision 2 was still failing.
  const graceAt = subscriber.accepted.findIndex((webhook) => webhook.data.id === grace.id && webhook.data.lastName === 'while-ada-fails');
  const adaRevision2At = subscriber.accepted.findIndex((webhook) => webhook.data.id === ada.id && webhook.revision === 2);
  expect(graceAt).toBeGreaterThanOrEqual(0);
  expect(graceAt).toBeLessThan(adaRevision2At);
}, 240_000);

test('each webhook carries the object revision, one more per update (a change of its links included), and an *.updated one lists in previousAttributes exactly the fields that changed, with their old values', async () => {
  const { api } = await system.createProgram();
  const subscriber = await receiver();
  const endpoint = await okBody(api.post('/webhook-endpoints', { url: subscriber.url, eventTypes: ['affiliate.*'] }));
  expect(endpoint.ordering).toBe('NONE');

  const ada = await okBody(api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com' }));
  const created = await eventually(() => expectOne(subscriber.accepted, (webhook) => webhook.event === 'affiliate.created'), 60_000);
  await okBody(api.put('/affiliates', { affiliateId: ada.id, firstName: 'Augusta' }));
  const first = await eventually(() => expectOne(subscriber.accepted, (webhook) => webhook.revision === 1), 60_000);
  await okBody(api.put('/affiliates', { affiliateId: ada.id, lastName: 'Lovelace', email: 'ada.lovelace@example.com' }));
  const second = await eventually(() => expectOne(subscriber.accepted, (webhook) => webhook.revision === 2), 60_000);

  expect(created.revision).toBe(0);
  expect(created.previousAttributes).toBeUndefined();
  expect(first).toMatchObject({ event: 'affiliate.updated', data: { firstName: 'Augusta', lastName: 'Byron' } });
  expect(first.previousAttributes).toEqual({ firstName: 'Ada', ...updatedAtIfChanged(created, first) });
  expect(second).toMatchObject({
    event: 'affiliate.updated',
    data: { firstName: 'Augusta', lastName: 'Lovelace', email: 'ada.lovelace@example.com' },
  });
  expect(second.previousAttributes).toEqual({ lastName: 'Byron', email: 'ada@example.com', ...updatedAtIfChanged(first, second) });

  // A new link is written with the link, not the affiliate, and still takes the affiliate's next revision.
  await okBody(api.post('/links', { link: 'ada-autumn', affiliateId: ada.id }));
  const third = await eventually(() => expectOne(subscriber.accepted, (webhook) => webhook.revision === 3), 60_000);
  expect(third.event).toBe('affiliate.updated');
  expect(third.previousAttributes).toEqual({ affiliateLinks: second.data.affiliateLinks });
  expect((third.data.affiliateLinks as { link: string }[]).map((link) => link.link)).toContain('ada-autumn');
}, 180_000);

function expectOne(webhooks: Webhook[], matching: (webhook: Webhook) => boolean): Webhook {
  const found = webhooks.filter(matching);
  expect(found).toHaveLength(1);
  return found[0] as Webhook;
}

/** `updatedAt` changes with every update, unless two land within one millisecond. */
function updatedAtIfChanged(before: Webhook, after: Webhook): Record<string, unknown> {
  return before.data.updatedAt === after.data.updatedAt ? {} : { updatedAt: before.data.updatedAt };
}
