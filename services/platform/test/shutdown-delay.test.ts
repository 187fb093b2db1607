import { bootService, parseConfig, baseConfigShape, ConfigError } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import { Router } from 'express';
import { Agent, get } from 'node:http';
import { connect } from 'node:net';
import request from 'supertest';

/**
 * A service that is told to stop first fails its readiness and keeps serving for the shutdown delay
 * (so its load balancer stops sending before it stops listening), then drains. The gateway does the
 * same on SIGTERM (gateway/test/shutdown.readiness-first.test.ts).
 */
test('a stopping service answers /readyz 503 while it still serves requests for SHUTDOWN_DELAY_MS, then stops', async () => {
  const routes = Router();
  routes.get('/answer', (_request, response) => {
    response.json({ served: true });
  });
  const service = await bootService(testServiceSettings('platform-shutdown', { shutdownDelayMs: 5000 }), () => ({ routes }));
  await request(service.url).get('/readyz').expect(200);

  const stopped = service.stop();
  const readiness = await request(service.url).get('/readyz').expect(503);
  expect(readiness.body.checks).toMatchObject({ accepting: false });
  const answer = await request(service.url).get('/answer').set(internalHeaders(newProgramId())).expect(200);
  expect(answer.body).toEqual({ served: true });

  await stopped;
  await expect(request(service.url).get('/healthz')).rejects.toThrow();
});

test('a caller that keeps its connection alive and keeps sending on it cannot hold a stop: from the stop on, every answer is the last on its connection (Connection: close), and the service stops', async () => {
  const routes = Router();
  routes.get('/answer', (_request, response) => {
    response.json({ served: true });
  });
  const service = await bootService(testServiceSettings('platform-keep-alive', { shutdownDelayMs: 1000 }), () => ({ routes }));
  // One pooled connection, as a gateway's or a service client's pool keeps one to each replica.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const ask = () =>
    new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const call = get(`${service.url}/answer`, { agent, headers: internalHeaders(newProgramId()) }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
      });
      call.on('error', reject);
    });
  const before = await ask();
  expect(before).toMatchObject({ status: 200, connection: 'keep-alive' });

  let stopping = true;
  const stopped = service.stop().finally(() => {
    stopping = false;
  });
  const during: { status: number; connection: string | undefined }[] = [];
  // Keeps the pooled connection busy through the delay; before the fix nothing ever closed it, so
  // the stop waited for it until the process's grace ran out and the caller's requests were cut.
  while (stopping) {
    const answer = await ask().catch(() => undefined);
    if (!answer) break; // the service stopped listening: a new connection is refused
    during.push(answer);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stopped;
  agent.destroy();
  expect(during.length).toBeGreaterThan(0);
  expect(during.filter((answer) => answer.status !== 200 || answer.connection !== 'close')).toEqual([]);
});

test('a keep-alive connection idle when the drain begins is left to its caller: a request written on it then is answered (Connection: close), not cut', async () => {
  const routes = Router();
  routes.get('/answer', (_request, response) => {
    response.json({ served: true });
  });
  const service = await bootService(testServiceSettings('platform-idle-drain', { shutdownDelayMs: 100 }), () => ({ routes }));
  const programId = newProgramId();
  const socket = connect(service.port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  socket.on('close', () => (closed = true));
  const answers = () => received.split('HTTP/1.1 ').slice(1);
  const ask = async (count: number) => {
    const headers = Object.entries(internalHeaders(programId))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`GET /answer HTTP/1.1\r\nhost: service\r\n${headers}\r\n`);
    await eventually(() => expect(answers().filter((answer) => answer.includes('{"served":true}'))).toHaveLength(count));
  };
  await ask(1);

  const stopped = service.stop();
  // The drain has begun once the service no longer accepts connections; ours stayed idle all along.
  await eventually(async () => {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(service.port, '127.0.0.1');
      probe.once('connect', () => (probe.destroy(), resolve(false))).once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
  expect(closed).toBe(false);
  await ask(2); // before, the drain closed idle connections at once: a caller writing on one then saw it cut
  expect(answers()[1]).toMatch(/^200 /);
  expect(answers()[1]).toMatch(/\r\nconnection: close\r\n/i);
  await stopped;
  expect(closed).toBe(true);
});

test('SHUTDOWN_DELAY_MS is validated at start: a whole number of milliseconds from 0 to 60000', () => {
  expect(parseConfig(baseConfigShape, {}).SHUTDOWN_DELAY_MS).toBe(0);
  expect(parseConfig(baseConfigShape, { SHUTDOWN_DELAY_MS: '5000' }).SHUTDOWN_DELAY_MS).toBe(5000);
  for (const bad of ['-1', 'soon', '60001', '1.5']) {
    expect(() => parseConfig(baseConfigShape, { SHUTDOWN_DELAY_MS: bad })).toThrow(ConfigError);
    expect(() => parseConfig(baseConfigShape, { SHUTDOWN_DELAY_MS: bad })).toThrow(/SHUTDOWN_DELAY_MS/);
  }
});
