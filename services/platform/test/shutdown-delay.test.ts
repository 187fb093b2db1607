import { bootService, parseConfig, baseConfigShape, ConfigError } from '@affiliate/platform';
import { internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import { Router } from 'express';
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

test('SHUTDOWN_DELAY_MS is validated at start: a whole number of milliseconds from 0 to 60000', () => {
  expect(parseConfig(baseConfigShape, {}).SHUTDOWN_DELAY_MS).toBe(0);
  expect(parseConfig(baseConfigShape, { SHUTDOWN_DELAY_MS: '5000' }).SHUTDOWN_DELAY_MS).toBe(5000);
  for (const bad of ['-1', 'soon', '60001', '1.5']) {
    expect(() => parseConfig(baseConfigShape, { SHUTDOWN_DELAY_MS: bad })).toThrow(ConfigError);
    expect(() => parseConfig(baseConfigShape, { SHUTDOWN_DELAY_MS: bad })).toThrow(/SHUTDOWN_DELAY_MS/);
  }
});
