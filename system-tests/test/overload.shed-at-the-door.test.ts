import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@affiliate/platform/testing';
import { okBody as ok, System, type Api, type ApiResponse } from '../harness';

/**
 * Issue 29, deliverable 2: overload is shed at the door. While a program's webhooks wait past a bound
 * in the dispatcher, the services refuse that program's event-creating writes with 503 and
 * Retry-After before running them, and serve its reads and every other program. Each delivery waits
 * its turn per endpoint (`WEBHOOK_ENDPOINT_CONCURRENCY=1`) and a hanging subscriber is not given up on
 * before it is released, so the backlog stands still while the test looks; the per-program bound is 3.
 */
let system: System;

beforeAll(async () => {
  system = await System.start({
    WEBHOOK_ENDPOINT_CONCURRENCY: '1',
    WEBHOOK_TIMEOUT_MS: '60000',
    SHED_WEBHOOK_BACKLOG_PER_PROGRAM: '3',
  });
}, 180_000);

afterAll(async () => {
  await system?.stop();
});

/** A subscriber holding every delivery until `release()`. */
async function hangingSubscriber(): Promise<{ url: string; release: () => void; close: () => Promise<void> }> {
  const held: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => held.push(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    release: () => {
      for (const response of held.splice(0)) response.writeHead(200).end('ok');
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const newAffiliate = () => ({ firstName: 'Ada', lastName: 'Byron', email: `ada-${randomUUID().slice(0, 8)}@example.com` });

/** Creates affiliates until one is refused (each accepted one adds a webhook behind the hanging subscriber); returns the refusal. */
async function createUntilRefused(api: Api): Promise<{ refused: ApiResponse; email: string }> {
  return eventually(
    async () => {
      const affiliate = newAffiliate();
      const answer = await api.post('/affiliates', affiliate);
      // Not a 503 of a slow machine (the gateway's timeout): the service's refusal.
      expect({ status: answer.status, code: answer.body?.code }).toEqual({ status: 503, code: 'service_busy' });
      return { refused: answer, email: affiliate.email };
    },
    120_000,
    200,
  );
}

function expectShed(answer: ApiResponse) {
  expect(answer.status).toBe(503);
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(answer.body).toMatchObject({ code: 'service_busy', error: expect.stringMatching(/retry in a moment/) });
}

test("a program whose webhooks are past the bound has its event-creating writes refused with 503 and Retry-After, storing nothing, while its reads and another program's writes are served; once the webhooks go out its writes are served again", async () => {
  const hanging = await hangingSubscriber();
  try {
    const behind = await system.createProgram();
    await ok(behind.api.post('/webhook-endpoints', { url: hanging.url, eventTypes: ['affiliate.created', 'coupon.created'] }));
    const quiet = await system.createProgram();

    const { refused, email } = await createUntilRefused(behind.api);
    expectShed(refused);
    // Refused before it ran: the affiliate is not there, and no event of it will come.
    expect(await ok(behind.api.get(`/affiliates?email=${encodeURIComponent(email)}`))).toBeNull();
    // Every service refuses that program's event-creating writes, not only the one whose events wait.
    expectShed(await behind.api.post('/coupons', { name: 'while behind', percentOff: 10 }));
    // Its reads are served.
    const listed = await behind.api.get('/affiliates');
    expect(listed.status).toBe(200);
    expect(listed.body.length).toBeGreaterThanOrEqual(3);
    // Another program, whose own webhooks are not behind, is served.
    await ok(quiet.api.post('/affiliates', newAffiliate()));
    await ok(quiet.api.post('/coupons', { name: 'quiet', percentOff: 10 }));

    // The subscriber answers: the backlog drains, and the program's writes are served again.
    await eventually(
      async () => {
        hanging.release();
        const answer = await behind.api.post('/coupons', { name: 'caught up', percentOff: 10 });
        expect(answer.status).toBe(200);
      },
      60_000,
      500,
    );
    await ok(behind.api.post('/affiliates', newAffiliate()));
  } finally {
    hanging.release();
    await hanging.close();
  }
}, 300_000);

test('with the dispatcher down nothing is refused for a backlog: no news is no backlog, so one service never depends on another being up', async () => {
  const hanging = await hangingSubscriber();
  try {
    const behind = await system.createProgram();
    await ok(behind.api.post('/webhook-endpoints', { url: hanging.url, eventTypes: ['affiliate.created'] }));
    expectShed((await createUntilRefused(behind.api)).refused);

    await system.kill('webhook-dispatcher');
    await eventually(async () => expect((await behind.api.post('/affiliates', newAffiliate())).status).toBe(200), 60_000, 500);
  } finally {
    hanging.release();
    await hanging.close();
    await system.launch('webhook-dispatcher');
    await system.waitReady('webhook-dispatcher');
  }
}, 300_000);
