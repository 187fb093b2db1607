import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceivedWebhook = { path: string; headers: IncomingHttpHeaders; body: string };
/** An answer, sent after `delayMs` when given (a slow subscriber); or no answer at all. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';
export type Answering = (webhook: ReceivedWebhook, index: number) => Answer;

export type Subscriber = {
  url: string;
  /** Several endpoints on one server, told apart by path. */
  urlFor: (path: string) => string;
  received: ReceivedWebhook[];
  /** Requests received and not answered yet (a hanging subscriber). */
  unanswered: () => number;
  answer: (answering: Answering) => void;
  /** Answers every hanging request now. */
  release: (status: number) => void;
  close: () => Promise<void>;
};

/** A real HTTP server on localhost that records every webhook with its raw body. */
export async function startSubscriber(answering: Answering = () => ({ status: 200 })): Promise<Subscriber> {
  const received: ReceivedWebhook[] = [];
  const hanging = new Set<ServerResponse>();
  let current = answering;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook = { path: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(webhook);
      const answer = current(webhook, received.length - 1);
      if (answer === 'hang') {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const send = () => {
        response.writeHead(answer.status, answer.headers ?? {});
        response.end(answer.body ?? 'ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    urlFor: (path: string) => `http://127.0.0.1:${port}/${path}`,
    received,
    unanswered: () => hanging.size,
    answer: (answering) => {
      current = answering;
    },
    release: (status) => {
      for (const response of hanging) {
        response.writeHead(status);
        response.end();
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
