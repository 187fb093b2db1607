import { eventually } from '@affiliate/platform/testing';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { allUpstreams, bearer, createProgramWithKey, startEchoUpstream, startGateway, type EchoUpstream } from './support';

/**
 * The gateway's admission towards a service, on its metrics listener (issue 26): a call refused for
 * the program's in-flight cap is counted under its upstream and reason, never its program.
 */
let upstream: EchoUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url), upstreamMaxInFlightPerProgram: 1, upstreamTimeoutMs: 60_000 });
});
afterAll(async () => {
  await gateway.stop();
});

const scrape = async () => (await fetch(`${gateway.metricsUrl}/metrics`)).text();

test("a call beyond the program's in-flight cap is answered 503 and counted as shed under its upstream and reason", async () => {
  const { key, programId } = await createProgramWithKey(gateway);
  upstream.hangFor(programId);
  const held = request(gateway.app)
    .get('/api/v1/coupons')
    .set(bearer(key))
    .then((answer) => answer.status);
  // The first call is at the service (and hangs there): the program's one call in flight.
  await eventually(() => expect(upstream.received.some((entry) => entry.headers['x-program-id'] === programId)).toBe(true), 30_000);
  expect(await scrape()).not.toMatch(/^upstream_requests_shed_total\{/m);
  const refused = await request(gateway.app).get('/api/v1/coupons').set(bearer(key));
  expect(refused.status).toBe(503);
  expect(await scrape()).toMatch(/^upstream_requests_shed_total\{upstream="coupon",reason="in_flight_cap",service="gateway"\} 1$/m);
  // The service goes away: the held call ends too, so nothing outlives the test.
  await upstream.stop();
  await held.catch(() => undefined);
});

test('a call waiting for one of the connections to its upstream is counted as waiting under that upstream, and no longer once it is sent', async () => {
  const service = await startEchoUpstream();
  const pooled = await startGateway({ upstreams: allUpstreams(service.url), upstreamMaxSockets: 1, upstreamTimeoutMs: 60_000 });
  const waitingOf = async () =>
    Number(
      /^upstream_requests_waiting\{upstream="coupon",service="gateway"\} (\S+)$/m.exec(
        await (await fetch(`${pooled.metricsUrl}/metrics`)).text(),
      )?.[1] ?? 0,
    );
  try {
    const [holder, waiter] = [await createProgramWithKey(pooled), await createProgramWithKey(pooled)];
    service.hangFor(holder.programId);
    // The one connection is held by a call the service never answers; another program's call waits for it.
    const held = request(pooled.app)
      .get('/api/v1/coupons')
      .set(bearer(holder.key))
      .then((answer) => answer.status);
    await eventually(() => expect(service.received.some((entry) => entry.headers['x-program-id'] === holder.programId)).toBe(true), 30_000);
    expect(await waitingOf()).toBe(0);
    const waiting = request(pooled.app)
      .get('/api/v1/coupons')
      .set(bearer(waiter.key))
      .then((answer) => answer.status);
    await eventually(async () => expect(await waitingOf()).toBe(1), 30_000);
    // The service goes away: the held call ends, the waiting one is sent (or refused) and waits no more.
    await service.stop();
    await Promise.all([held.catch(() => undefined), waiting.catch(() => undefined)]);
    await eventually(async () => expect(await waitingOf()).toBe(0), 30_000);
  } finally {
    await pooled.stop();
  }
});
