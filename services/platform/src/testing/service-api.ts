import type { EventEnvelope } from '@affiliate/contracts';
import type { Connection } from 'mongoose';
import request from 'supertest';
import { EventBus } from '../events/bus';
import { processedEvents } from '../events/processed-events';
import { createLogger } from '../logger';
import { internalHeaders, uniqueName } from './index';

/** A service called the way the gateway calls it: internal credential and program scope set. */
export type ServiceApi = {
  get: (path: string, query?: Record<string, string>) => request.Test;
  post: (path: string, body?: unknown) => request.Test;
  put: (path: string, body?: unknown) => request.Test;
  delete: (path: string, body?: unknown) => request.Test;
};

/** Any JSON value as the body, including the ones supertest would not serialize (numbers, null). */
const withJson = (test: request.Test, body: unknown) =>
  body === undefined ? test : test.set('content-type', 'application/json').send(JSON.stringify(body));

export function serviceApi(baseUrl: string, programId: string): ServiceApi {
  const headers = internalHeaders(programId);
  return {
    get: (path, query = {}) => request(baseUrl).get(path).query(query).set(headers),
    post: (path, body) => withJson(request(baseUrl).post(path).set(headers), body),
    put: (path, body) => withJson(request(baseUrl).put(path).set(headers), body),
    delete: (path, body) => withJson(request(baseUrl).delete(path).set(headers), body),
  };
}

export type EventRecorder = { events: EventEnvelope[]; bus: EventBus; close: () => Promise<void> };

/** Records, in arrival order, the events published on an exchange whose type matches one of the patterns. */
export async function recordEvents(options: {
  amqpUrl: string;
  exchange: string;
  eventTypes: string[];
  connection: Connection;
}): Promise<EventRecorder> {
  const bus = new EventBus({ url: options.amqpUrl, exchange: options.exchange, logger: createLogger('event-recorder', 'silent') });
  const events: EventEnvelope[] = [];
  await bus.subscribe({
    queue: uniqueName('recorder'),
    eventTypes: options.eventTypes,
    // One at a time: with several in flight, each waits on its own claim in the database and they
    // can be recorded in another order than they were published (tests read "the last one").
    prefetch: 1,
    processedEvents: processedEvents(options.connection, uniqueName('recorder')),
    handler: async (event) => void events.push(event),
  });
  return { events, bus, close: () => bus.close() };
}

/** Values no field should accept: wrong types, operator objects, prototype keys, huge and blank strings. */
const HOSTILE_VALUES: unknown[] = [
  null,
  42,
  -1,
  1.5,
  -0.01,
  1e300,
  true,
  [],
  ['x'],
  {},
  { $gt: '' },
  { $ne: null },
  { __proto__: { admin: true } },
  'x'.repeat(100_000),
  '',
  ' ',
];

/** Every field of a valid body replaced by each hostile value in turn, plus unknown, nested and `__proto__` keys. */
export function* hostileBodies(valid: Record<string, unknown>): Generator<Record<string, unknown>> {
  for (const field of Object.keys(valid)) {
    for (const value of HOSTILE_VALUES) yield { ...valid, [field]: value };
  }
  yield { ...valid, unexpected: 'field' };
  yield { ...valid, nested: { deeper: { $where: 'sleep(1000)' } } };
  yield JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(valid).slice(1)}`) as Record<string, unknown>;
}
