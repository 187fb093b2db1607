import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RunningService } from '@affiliate/platform';
import { newProgramId } from '@affiliate/platform/testing';
import { createSubscriberClient } from '../src/data-access/subscriber-client';
import { bootDispatcher, createEndpoint, deliveryReaching, eventPublisher } from './support/dispatcher';

/** A subscriber that counts the connections it accepts and the requests on each. */
async function countingSubscriber(answer: (requestOnSocket: number, socket: Socket) => 'ok' | 'drop' = () => 'ok') {
  const stats = { connections: 0, requests: 0 };
  const perSocket = new WeakMap<Socket, number>();
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      stats.requests += 1;
      const nth = (perSocket.get(request.socket) ?? 0) + 1;
      perSocket.set(request.socket, nth);
      if (answer(nth, request.socket) === 'drop') request.socket.destroy();
      else response.end('ok');
    });
  });
  server.on('connection', () => {
    stats.connections += 1;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    stats,
    port,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const webhook = (url: string) => ({ url, headers: { 'content-type': 'application/json' }, body: '{}' });

describe('kept-alive connections to subscribers', () => {
  let service: RunningService;
  let publisher: ReturnType<typeof eventPublisher>;
  let subscriber: Awaited<ReturnType<typeof countingSubscriber>>;
  const programId = newProgramId();

  beforeAll(async () => {
    service = await bootDispatcher();
    publisher = eventPublisher(service);
    subscriber = await countingSubscriber();
  });
  afterAll(async () => {
    await publisher.close();
    await service.stop();
    await subscriber.close();
  });

  test('deliveries to one subscriber reuse its connections: it sees fewer connections than deliveries', async () => {
    const endpoint = await createEndpoint(service, programId, {
      url: `http://127.0.0.1:${subscriber.port}/hooks`,
      eventTypes: ['sale.created'],
    });
    const deliveries = 5;
    // One after the other, each recorded before the next event: the connection is idle in the pool by then.
    for (let sent = 0; sent < deliveries; sent++) {
      const event = await publisher.publish('sale.created', programId);
      await deliveryReaching(service, programId, { eventId: event.id, endpointId: endpoint.id }, 'succeeded');
    }
    expect(subscriber.stats.requests).toBe(deliveries);
    expect(subscriber.stats.connections).toBeLessThan(deliveries);
  });
});

test('a pooled client refuses a name resolving to a private address at connect time, every time, even where another client has a connection open to it', async () => {
  // `localhost` stands for a name that resolved elsewhere when the endpoint was accepted (DNS rebinding).
  const subscriber = await countingSubscriber();
  const url = `http://localhost:${subscriber.port}/hook`;
  const permissive = createSubscriberClient({ timeoutMs: 2000, allowPrivateUrls: true, showPrivateResponses: false });
  const strict = createSubscriberClient({ timeoutMs: 2000, allowPrivateUrls: false, showPrivateResponses: false });
  try {
    // A client that allows private addresses (local development) keeps a connection to it open...
    expect((await permissive.send(webhook(url))).statusCode).toBe(200);
    expect((await permissive.send(webhook(url))).statusCode).toBe(200);
    expect(subscriber.stats).toEqual({ connections: 1, requests: 2 });
    // ...which a client refusing them never uses: each of its attempts is checked when it connects.
    for (let attempt = 1; attempt <= 2; attempt++) {
      const outcome = await strict.send(webhook(url));
      expect({ attempt, statusCode: outcome.statusCode, error: outcome.error }).toEqual({
        attempt,
        statusCode: null,
        error: expect.stringMatching(/private, loopback or link-local/),
      });
    }
    expect(subscriber.stats).toEqual({ connections: 1, requests: 2 });
  } finally {
    permissive.abortAll();
    strict.abortAll();
    await subscriber.close();
  }
});

test('an attempt on a kept-alive connection the subscriber closed goes out again on a new connection, and is delivered', async () => {
  // The subscriber drops every connection at its second request, as one closing an idle connection
  // just as the request arrives would.
  const subscriber = await countingSubscriber((requestOnSocket) => (requestOnSocket >= 2 ? 'drop' : 'ok'));
  const client = createSubscriberClient({ timeoutMs: 2000, allowPrivateUrls: true, showPrivateResponses: true });
  const url = `http://127.0.0.1:${subscriber.port}/hook`;
  try {
    expect((await client.send(webhook(url))).statusCode).toBe(200);
    const outcome = await client.send(webhook(url));
    expect({ statusCode: outcome.statusCode, error: outcome.error }).toEqual({ statusCode: 200, error: null });
    expect(subscriber.stats).toEqual({ connections: 2, requests: 3 });
  } finally {
    client.abortAll();
    await subscriber.close();
  }
});
