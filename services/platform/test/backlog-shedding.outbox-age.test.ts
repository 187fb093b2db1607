import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { exampleEventData } from '@affiliate/contracts';
import { AggregateStore, bootService, createEvent, outboxPlugin, type OutboxFields, type RunningService } from '@affiliate/platform';
import {
  eventually,
  internalHeaders,
  newProgramId,
  recordEvents,
  testInfra,
  testServiceSettings,
  type EventRecorder,
} from '@affiliate/platform/testing';
import { Router } from 'express';
import { Schema } from 'mongoose';
import request from 'supertest';

/**
 * Shedding at the door by the outbox's age (issue 29, SHED_OUTBOX_AGE_SECONDS): a service whose
 * relay cannot publish (its connection to the broker cut) refuses every program's event-creating
 * writes once its oldest unpublished event is older than the bound, serves reads and writes without
 * events meanwhile, and accepts again once the broker is back and what waited went out. The service
 * reaches the real broker through a TCP relay of the test's own, which the test cuts and restores.
 */
type Thing = { _id: string; programId: string; createdAt: Date } & Partial<OutboxFields>;

/** A TCP relay to the broker: `cut` closes every connection through it and refuses new ones until `restore`. */
async function brokerLine(target: URL): Promise<{ url: string; cut: () => void; restore: () => void; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let cut = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = connect(Number(target.port || 5672), target.hostname);
    track(client);
    track(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(target.href);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.href.replace(/\/$/, ''),
    cut: () => {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let line: Awaited<ReturnType<typeof brokerLine>>;
let service: RunningService;
let recorder: EventRecorder;

beforeAll(async () => {
  line = await brokerLine(new URL(testInfra().amqpUrl.split(',')[0] as string));
  const settings = testServiceSettings('outbox_age', {
    amqpUrl: line.url,
    // A bound far below the retry interval of the relay (5 s), so the test sees it passed while cut.
    shedding: { webhookBacklog: 100_000, webhookBacklogPerProgram: 100_000, outboxAgeMs: 1000 },
  });
  service = await bootService(settings, (context) => {
    const schema = new Schema<Thing>({ _id: String, programId: String, createdAt: Date });
    schema.plugin(outboxPlugin);
    const Things = context.connection.model<Thing>('Thing', schema);
    const things = new AggregateStore<Thing>(context, () => Things);
    const routes = Router();
    routes.post('/things', async (request_, response) => {
      const programId = String(request_.header('x-program-id'));
      const id = randomUUID();
      await things.insert({ _id: id, programId, createdAt: new Date() }, () => [
        createEvent('coupon.created', programId, exampleEventData('coupon.created', { id })),
      ]);
      response.json({ id });
    });
    routes.get('/things', async (request_, response) => {
      response.json(await Things.find({ programId: String(request_.header('x-program-id')) }).lean());
    });
    routes.post('/clicks', (_request, response) => response.json({ counted: true }));
    return { routes, writesWithoutEvents: ['POST /clicks'] };
  });
  // Straight to the broker, not through the line: what the service published, whenever it did.
  recorder = await recordEvents({ ...settings, amqpUrl: testInfra().amqpUrl, eventTypes: ['#'], connection: service.context.connection });
});

afterAll(async () => {
  line.restore();
  await recorder.close();
  await service.stop();
  await line.close();
});

const write = (programId: string) => request(service.url).post('/things').set(internalHeaders(programId)).send({});

test("while the broker is out of reach longer than the outbox's bound, every program's event-creating writes are refused with 503 and Retry-After before they run, reads and writes without events are served, and once what waited is published writes are served again", async () => {
  const program = newProgramId();
  const other = newProgramId();
  const accepted: string[] = [];
  const first = await write(program);
  expect(first.status).toBe(200);
  accepted.push(first.body.id);
  await eventually(() => expect(recorder.events.map((event) => event.data.id)).toContain(first.body.id));
  // Published and cleared: nothing waits in the outbox when the line is cut.
  await eventually(() => expect(service.context.relay.backlog().pending).toBe(0));

  line.cut();
  // Accepted while its outbox is younger than the bound; refused from the bound on.
  const refused = await eventually(async () => {
    const answer = await write(program);
    if (answer.status === 200) accepted.push(answer.body.id);
    expect(answer.status).toBe(503);
    return answer;
  }, 30_000);
  expect(accepted.length).toBeGreaterThan(1);
  expect(refused.body).toMatchObject({
    code: 'service_busy',
    error: expect.stringMatching(/busy publishing earlier events.*retry in a moment/),
  });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  // The bound is the service's, not a program's: a program that wrote nothing is refused too.
  expect((await write(other)).status).toBe(503);
  // Refused before the route ran: nothing of either was stored.
  const stored = await request(service.url).get('/things').set(internalHeaders(program));
  expect(stored.status).toBe(200);
  expect(stored.body.map((thing: Thing) => thing._id).sort()).toEqual([...accepted].sort());
  expect((await request(service.url).get('/things').set(internalHeaders(other))).body).toEqual([]);
  expect((await request(service.url).post('/clicks').set(internalHeaders(program)).send({})).status).toBe(200);

  line.restore();
  // Every accepted event goes out once the broker is back (the relay retries), and then writes are served.
  await eventually(() => expect(recorder.events.map((event) => event.data.id)).toEqual(expect.arrayContaining(accepted)), 60_000, 200);
  const again = await eventually(async () => {
    const answer = await write(other);
    expect(answer.status).toBe(200);
    return answer;
  }, 30_000);
  await eventually(() => expect(recorder.events.map((event) => event.data.id)).toContain(again.body.id));
}, 120_000);
