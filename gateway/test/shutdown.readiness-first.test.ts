import { eventually } from '@affiliate/platform/testing';
import { adminAuth, allUpstreams, bearer, spawnGateway, startEchoUpstream, type EchoUpstream, type GatewayProcess } from './support';

/**
 * On SIGTERM the gateway first stops being ready while it keeps serving, for SHUTDOWN_DELAY_MS (the
 * time a load balancer takes to stop sending it requests), and only then drains and exits. The
 * compiled gateway runs as its own process (build first), because the signal is the process's.
 */
let upstream: EchoUpstream;
let gateway: GatewayProcess;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  const upstreams = Object.entries(allUpstreams(upstream.url)).map(([name, url]) => [`${name.toUpperCase().replace(/-/g, '_')}_URL`, url]);
  gateway = await spawnGateway({ ...Object.fromEntries(upstreams), SHUTDOWN_DELAY_MS: '8000' });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const response = await fetch(`${gateway.url}${path}`, { ...init, signal: AbortSignal.timeout(5000) });
  return { status: response.status, body: await response.json() };
}

test('on SIGTERM /readyz answers 503 at once while requests are still served for SHUTDOWN_DELAY_MS, then the gateway drains and exits', async () => {
  const program = await call('/admin/v1/programs', { method: 'POST', headers: { ...adminAuth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Shutdown' }) });
  const key = await call(`/admin/v1/programs/${program.body.id}/api-keys`, { method: 'POST', headers: adminAuth });
  expect((await call('/readyz')).status).toBe(200);

  gateway.signal('SIGTERM');
  await eventually(async () => {
    const readiness = await call('/readyz');
    expect(readiness).toEqual({ status: 503, body: { status: 'not ready', checks: { accepting: false, mongo: true } } });
  }, 5000, 50);
  // Not ready, yet still serving: the requests a load balancer sends before it notices are answered.
  expect((await call('/api/v1/coupons', { headers: bearer(key.body.key) })).status).toBe(200);
  expect((await call('/healthz')).status).toBe(200);
  expect(gateway.exitCode()).toBeNull();

  expect(await gateway.exited).toBe(0);
}, 60_000);
