import type { EventEnvelope, EventType, Program } from '@affiliate/contracts';
import { bootService, createEvent, createLogger, EventBus, processedEvents, type RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId, testServiceSettings, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildAffiliateService } from '../src/service';

/** The affiliate service on port 0 against the real database and broker, plus a second bus to talk to it. */
export type Harness = {
  service: RunningService;
  bus: EventBus;
  api: (programId: string) => Api;
  /** Publishes an event onto the service's exchange, as another component would. */
  publish: (event: EventEnvelope) => Promise<void>;
  /** Events the service published, in arrival order. */
  published: EventEnvelope[];
  setProgram: (programId: string, settings: Partial<Program>) => Promise<void>;
  stop: () => Promise<void>;
};

export type Api = {
  get: (path: string, query?: Record<string, string>) => request.Test;
  post: (path: string, body?: unknown) => request.Test;
  put: (path: string, body?: unknown) => request.Test;
  delete: (path: string, body?: unknown) => request.Test;
};

/** Any JSON value as the body, including the ones supertest would not serialize (numbers, null). */
const withJson = (test: request.Test, body: unknown) =>
  body === undefined ? test : test.set('content-type', 'application/json').send(JSON.stringify(body));

export async function startAffiliateService(): Promise<Harness> {
  const service = await bootService(testServiceSettings('affiliate'), (context) => buildAffiliateService(context));
  const bus = new EventBus({ url: service.context.settings.amqpUrl, exchange: service.context.settings.exchange, logger: createLogger('test-bus', 'silent') });
  const published: EventEnvelope[] = [];
  await bus.subscribe({
    queue: uniqueName('observer'),
    eventTypes: ['affiliate.*'],
    processedEvents: processedEvents(service.context.connection, uniqueName('observer')),
    handler: async (event) => void published.push(event),
  });
  const api = (programId: string): Api => {
    const headers = internalHeaders(programId);
    return {
      get: (path, query = {}) => request(service.url).get(path).query(query).set(headers),
      post: (path, body) => withJson(request(service.url).post(path).set(headers), body),
      put: (path, body) => withJson(request(service.url).put(path).set(headers), body),
      delete: (path, body) => withJson(request(service.url).delete(path).set(headers), body),
    };
  };
  const publish = (event: EventEnvelope) => bus.publish(event);
  const setProgram = async (programId: string, settings: Partial<Program>) => {
    const now = new Date().toISOString();
    const program: Program = {
      id: programId,
      name: 'Test program',
      urlModifier: 'ref',
      destinationUrls: [],
      requireApproval: false,
      defaultCommissionRate: 20,
      apiAccess: true,
      rateLimit: null,
      createdAt: now,
      updatedAt: now,
      ...settings,
    };
    await publish(createEvent('program.updated', programId, program));
  };
  const stop = async () => {
    await bus.close();
    await service.stop();
  };
  return { service, bus, api, publish, published, setProgram, stop };
}

export const eventsOf = (harness: Harness, type: EventType, id: string) =>
  harness.published.filter((event) => event.type === type && event.data.id === id);

export { newProgramId };
