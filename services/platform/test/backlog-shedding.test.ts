import { BacklogNewsPublisher, bootService, createLogger, EventBus, type RunningService } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId, testInfra, testServiceSettings } from '@affiliate/platform/testing';
import { Router } from 'express';
import request from 'supertest';

/**
 * Shedding at the door (issue 29): a service learns the dispatcher's backlog per program from the
 * dispatcher's news on the broker, and refuses event-creating writes past the bounds before they run.
 * The dispatcher is played by a BacklogNewsPublisher on a bus of its own, telling what the test sets.
 */
const logger = createLogger('backlog-shedding-test', 'silent');
let service: RunningService;
let dispatcherBus: EventBus;
let news: BacklogNewsPublisher | undefined;
/** What the pretend dispatcher holds per program. */
let held: Record<string, number> = {};
/** Writes the route ran: a refused write must never get here. */
const written: string[] = [];

beforeAll(async () => {
  const routes = Router();
  routes.post('/things', (request_, response) => {
    written.push(String(request_.header('x-program-id')));
    response.json({ ok: true });
  });
  routes.post('/clicks', (_request, response) => response.json({ counted: true }));
  routes.get('/things', (_request, response) => response.json([]));
  routes.post('/internal/things', (_request, response) => response.json({ ok: true }));
  const settings = testServiceSettings('shedding', {
    shedding: { webhookBacklog: 100, webhookBacklogPerProgram: 3, outboxAgeMs: 60_000 },
  });
  service = await bootService(settings, () => ({ routes, writesWithoutEvents: ['POST /clicks'] }));
  dispatcherBus = new EventBus({ url: testInfra().amqpUrl, exchange: settings.exchange, logger });
});

afterAll(async () => {
  await news?.stop();
  await dispatcherBus.close();
  await service.stop();
});

const write = (programId: string, path = '/things') => request(service.url).post(path).set(internalHeaders(programId)).send({});

function startNews() {
  news = new BacklogNewsPublisher(dispatcherBus, service.context.settings.exchange, () => held, logger);
  news.start();
}

test('a program whose webhooks are past its bound is refused its event-creating writes with 503 and Retry-After before they run; its reads, its writes without events, internal calls and other programs are served; once its backlog drains it is served again', async () => {
  const behind = newProgramId();
  const quiet = newProgramId();
  held = { [behind]: 5, [quiet]: 1 };
  startNews();
  const refused = await eventually(async () => {
    const answer = await write(behind);
    expect(answer.status).toBe(503);
    return answer;
  });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  expect(refused.body).toMatchObject({
    code: 'service_busy',
    error: expect.stringMatching(/too many webhooks waiting.*retry in a moment/),
  });
  // Refused before the route ran: nothing of it was written.
  const before = written.length;
  expect((await write(behind)).status).toBe(503);
  expect(written.length).toBe(before);

  expect((await request(service.url).get('/things').set(internalHeaders(behind))).status).toBe(200);
  expect((await write(behind, '/clicks')).status).toBe(200);
  // The router takes the path with a trailing slash too: so does the exemption.
  expect((await write(behind, '/clicks/')).status).toBe(200);
  expect((await write(behind, '/internal/things')).status).toBe(200);
  expect((await write(quiet)).status).toBe(200);
  expect(written.slice(before)).toEqual([quiet]);

  held = { [behind]: 2 };
  await eventually(async () => expect((await write(behind)).status).toBe(200));
});

test('when all programs together are past the shared bound, every program is refused, a quiet one too', async () => {
  const quiet = newProgramId();
  held = { [newProgramId()]: 2, [newProgramId()]: 2, other: 99 };
  await eventually(async () => {
    const answer = await write(quiet);
    expect(answer.status).toBe(503);
    expect(answer.body.code).toBe('service_busy');
  });
  held = {};
  await eventually(async () => expect((await write(quiet)).status).toBe(200));
});

test('no news is no backlog: once the dispatcher stops telling, nothing is refused', async () => {
  const behind = newProgramId();
  held = { [behind]: 50 };
  await eventually(async () => expect((await write(behind)).status).toBe(503));
  await news?.stop();
  news = undefined;
  await eventually(async () => expect((await write(behind)).status).toBe(200), 20_000, 200);
});
