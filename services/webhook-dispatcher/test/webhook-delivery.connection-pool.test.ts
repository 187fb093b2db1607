import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { RunningService } from '@affiliate/platform';
import { newProgramId } from '@affiliate/platform/testing';
import { createSubscriberClient } from '../src/data-access/subscriber-client';
import { bootDispatcher, createEndpoint, deliveryReaching, eventPublisher } from './support/dispatcher';

/** A subscriber that counts the connections it accepts and the requests on each. */
async function countingSubscriber(answer: (requestOnSocket: number) => 'ok' | 'reset mid-answer' = () => 'ok') {
  const stats = { connections: 0, requests: 0 };
  const perSocket = new WeakMap<Socket, number>();
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      stats.requests += 1;
      const nth = (perSocket.get(request.socket) ?? 0) + 1;
      perSocket.set(request.socket, nth);
      if (answer(nth) === 'ok') {
        response.end('ok');
        return;
      }
      // Status, headers and part of the body go out; once they are written, the connection is reset.
      response.writeHead(200, { 'content-length': '100' });
      response.write('partial', () => request.socket.resetAndDestroy());
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

/**
 * A subscriber (raw TCP, to control what it reads) that answers the first request on each connection
 * and then considers the connection closed, as a server closing an idle kept-alive connection does:
 * whatever arrives on it later is never read, and the connection is reset.
 */
async function idleClosingSubscriber() {
  const stats = { connections: 0, answered: 0 };
  const server = createNetServer((socket) => {
    stats.connections += 1;
    let received = Buffer.alloc(0);
    let answeredHere = false;
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      if (answeredHere) {
        socket.resetAndDestroy();
        return;
      }
      received = Buffer.concat([received, chunk]);
      const headersEnd = received.indexOf('\r\n\r\n');
      if (headersEnd < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(received.subarray(0, headersEnd).toString('latin1'))?.[1] ?? 0);
      if (received.length < headersEnd + 4 + length) return;
      answeredHere = true;
      stats.answered += 1;
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    stats,
    port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('an attempt on a kept-alive connection the subscriber had closed, unread, goes out again on a new connection, and is delivered', async () => {
  const subscriber = await idleClosingSubscriber();
  const client = createSubscriberClient({ timeoutMs: 2000, allowPrivateUrls: true, showPrivateResponses: true });
  const url = `http://127.0.0.1:${subscriber.port}/hook`;
  try {
    expect((await client.send(webhook(url))).statusCode).toBe(200);
    // The second send goes out on the first connection, which the subscriber no longer reads.
    const outcome = await client.send(webhook(url));
    expect({ statusCode: outcome.statusCode, error: outcome.error }).toEqual({ statusCode: 200, error: null });
    // Each send read and answered once: the one it never read went out again on a second connection.
    expect(subscriber.stats).toEqual({ connections: 2, answered: 2 });
  } finally {
    client.abortAll();
    await subscriber.close();
  }
});

test('an attempt whose answer had begun when the kept-alive connection was reset is not sent again: it is logged as cut off', async () => {
  // The second request on a connection is read, and its answer begins (status, headers, part of the
  // body) before the subscriber resets the connection.
  const subscriber = await countingSubscriber((requestOnSocket) => (requestOnSocket >= 2 ? 'reset mid-answer' : 'ok'));
  const client = createSubscriberClient({ timeoutMs: 2000, allowPrivateUrls: true, showPrivateResponses: true });
  const url = `http://127.0.0.1:${subscriber.port}/hook`;
  try {
    expect((await client.send(webhook(url))).statusCode).toBe(200);
    const outcome = await client.send(webhook(url));
    expect({ statusCode: outcome.statusCode, error: outcome.error }).toEqual({ statusCode: 200, error: 'the answer was cut off' });
    expect(subscriber.stats).toEqual({ connections: 1, requests: 2 });
  } finally {
    client.abortAll();
    await subscriber.close();
  }
});
