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
  gateway = await spawnGateway({ ...upstreamSettings(), SHUTDOWN_DELAY_MS: '8000' });
});

const upstreamSettings = () =>
  Object.fromEntries(
    Object.entries(allUpstreams(upstream.url)).map(([name, url]) => [`${name.toUpperCase().replace(/-/g, '_')}_URL`, url]),
  );

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${path}`, { ...init, signal: AbortSignal.timeout(5000) });
  return { status: response.status, body: await response.json() };
}

test('the first /readyz the gateway receives after SIGTERM answers 503, though a ready answer was given just before', async () => {
  const probe = await spawnGateway({ ...upstreamSettings(), SHUTDOWN_DELAY_MS: '8000' });
  const readyz = () => fetch(`${probe.url}/readyz`, { signal: AbortSignal.timeout(5000) });
  try {
    expect((await readyz()).status).toBe(200);
    probe.signal('SIGTERM');
    // Every answer the gateway gives once its stop has begun ends its connection; the first /readyz
    // answered so must be 503, not the ready answer shared from before the signal.
    const first = await eventually(
      async () => {
        const answer = await readyz();
        expect(answer.headers.get('connection')).toBe('close');
        return answer;
      },
      5000,
      10,
    );
    expect(first.status).toBe(503);
  } finally {
    await probe.stop();
  }
}, 60_000);

test('on SIGTERM /readyz answers 503 at once while requests are still served for SHUTDOWN_DELAY_MS, then the gateway drains and exits', async () => {
  const program = await call('/admin/v1/programs', {
    method: 'POST',
    headers: { ...adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Shutdown' }),
  });
  const key = await call(`/admin/v1/programs/${program.body.id}/api-keys`, { method: 'POST', headers: adminAuth });
  expect((await call('/readyz')).status).toBe(200);

  gateway.signal('SIGTERM');
  await eventually(
    async () => {
      const readiness = await call('/readyz');
      expect(readiness).toEqual({ status: 503, body: { status: 'not ready', checks: { accepting: false, mongo: true } } });
    },
    5000,
    50,
  );
  // Not ready, yet still serving: the requests a load balancer sends before it notices are answered.
  expect((await call('/api/v1/coupons', { headers: bearer(key.body.key) })).status).toBe(200);
  expect((await call('/healthz')).status).toBe(200);
  expect(gateway.exitCode()).toBeNull();

  expect(await gateway.exited).toBe(0);
}, 60_000);
