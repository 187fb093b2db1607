import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { context, createContextKey } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import express from 'express';
import { admissionControl } from '../src/http/admission';
import { createLogger } from '../src/logger';

/**
 * A request that waited for its turn runs in its own trace, not in the one of the request whose
 * answer freed its place. The http instrumentation binds each response to its request's context, so
 * the 'close' listener that frees a place runs in the finished request's trace (or in none, where
 * no trace starts); this test binds them the same way, with the SDK's own context manager.
 */
const REQUEST = createContextKey('the request this context belongs to');
const manager = new AsyncLocalStorageContextManager().enable();

beforeAll(() => context.setGlobalContextManager(manager));
afterAll(() => context.disable());

test('a request admitted after waiting runs in its own context, not in that of the request whose answer let it in', async () => {
  const held: Array<() => void> = [];
  const seen = new Map<string, unknown>();
  const app = express();
  app.use((request, response, next) => {
    const own = context.active().setValue(REQUEST, request.query.tag);
    context.bind(own, request);
    context.bind(own, response);
    context.with(own, next);
  });
  let waiting = 0;
  const settings = { maxConcurrent: 1, maxQueued: 10, maxWaitMs: 30_000, deadlineMs: 60_000 };
  app.use(admissionControl(settings, createLogger('test', 'silent'), 'test', (_running, queued) => (waiting = queued)));
  app.get('/held', (request, response) => {
    seen.set(String(request.query.tag), context.active().getValue(REQUEST));
    held.push(() => response.json({ ok: true }));
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/held`;
  try {
    const first = fetch(`${url}?tag=first`, { headers: { connection: 'close' } });
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // The second waits for the first's place, which the first's answer gives back.
    const second = fetch(`${url}?tag=second`, { headers: { connection: 'close' } });
    while (waiting === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    held.shift()?.();
    await first;
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    held.shift()?.();
    await second;
    expect(Object.fromEntries(seen)).toEqual({ first: 'first', second: 'second' });
  } finally {
    server.close();
  }
});
