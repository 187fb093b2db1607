import { bootService, type RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import { Router } from 'express';

/**
 * METRICS_PORT (issue 26): a service given a metrics port serves /metrics there and not on its API
 * port, so a NetworkPolicy can open the one to the monitoring namespace and keep the other closed.
 */
let service: RunningService;

beforeAll(async () => {
  service = await bootService(testServiceSettings('metrics-listener', { metricsPort: 0 }), () => ({ routes: Router() }));
});
afterAll(() => service.stop());

test('with a metrics port, /metrics is served on it with the domain metrics, and the API port does not serve it', async () => {
  expect(service.metricsUrl).not.toBe(service.url);
  const scraped = await fetch(`${service.metricsUrl}/metrics`);
  expect(scraped.status).toBe(200);
  const text = await scraped.text();
  expect(text).toContain('outbox_documents_pending{service="metrics-listener"} 0');
  expect(text).toContain('# TYPE events_consumed_total counter');
  // Not even with the internal credential: the API port has no /metrics route any more.
  expect((await fetch(`${service.url}/metrics`)).status).toBe(401);
  expect((await fetch(`${service.url}/metrics`, { headers: internalHeaders(newProgramId()) })).status).toBe(404);
});
