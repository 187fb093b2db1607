import { bootService, type RunningService } from '@affiliate/platform';
import { eventually, testServiceSettings } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildReferralService } from '../../services/referral/src/service';
import type { RunningGateway } from '../src/gateway';
import {
  allUpstreams,
  bearer,
  createProgramWithKey,
  DEAD_UPSTREAM,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type ProgramWithKey,
} from './support';

let referral: RunningService;
let hung: EchoUpstream;
let gateway: RunningGateway;
let program: ProgramWithKey;
const CIRCUIT_RESET_MS = 4000;

beforeAll(async () => {
  referral = await bootService(testServiceSettings('referral'), (context) =>
    buildReferralService(context, { affiliateUrl: DEAD_UPSTREAM }),
  );
  hung = await startEchoUpstream();
  gateway = await startGateway({
    upstreams: { ...allUpstreams(hung.url), referral: referral.url },
    // Wide enough for an answering upstream on a loaded 2-core machine (500 ms once timed out a
    // healthy call there); the circuit stays open for a few seconds, so the fail-fast check below
    // fits inside one open period.
    upstreamTimeoutMs: 2000,
    circuitResetMs: CIRCUIT_RESET_MS,
  });
  program = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await hung.stop();
  await referral.stop();
});

test('a stopped service gives 503 {error}, and the gateway keeps serving the others', async () => {
  const alive = await request(gateway.url).get('/api/v1/referrals').set(bearer(program.key));
  expect(alive.status).toBeLessThan(500);
  await referral.stop();
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const response = await request(gateway.url).get('/api/v1/referrals').set(bearer(program.key)).expect(503);
    expect(response.body).toMatchObject({ error: 'The referral service is unavailable; retry later' });
    expect(response.headers['ratelimit-limit']).toBeDefined();
  }
  // The gateway stays ready: a dead upstream is its own routes' 503, never the gateway's readiness.
  await request(gateway.url).get('/readyz').expect(200);
  await request(gateway.url).get('/api/v1/coupons').set(bearer(program.key)).expect(200);
});

test('a service that stops answering trips its circuit: later requests fail fast without reaching it', async () => {
  hung.answerWith(null);
  const reached = () => hung.received.filter((received) => received.url.startsWith('/sales')).length;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    await request(gateway.url).get('/api/v1/sales').set(bearer(program.key)).expect(503);
  }
  const reachedWhenOpen = reached();
  const openedAt = Date.now();
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const response = await request(gateway.url).get('/api/v1/sales').set(bearer(program.key)).expect(503);
    expect(response.body).toMatchObject({ error: 'The sale service is unavailable; retry later' });
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  }
  // An open circuit lets one trial through per reset period (it hangs and opens it again): on a
  // machine so loaded that these five calls outlast a period, those trials are all that may arrive.
  const trialsAllowed = Math.floor((Date.now() - openedAt) / CIRCUIT_RESET_MS);
  expect(reached() - reachedWhenOpen).toBeLessThanOrEqual(trialsAllowed);

  // Once the service answers again, a trial request after the reset timeout closes the circuit.
  hung.answerWith(200);
  await eventually(() => request(gateway.url).get('/api/v1/sales').set(bearer(program.key)).expect(200), 30_000, 200);
});

test("one program's timeouts open a circuit for that program only, never for another", async () => {
  const victim = await createProgramWithKey(gateway);
  const slow = await createProgramWithKey(gateway);
  hung.hangFor(slow.programId);
  try {
    const reachedBySlow = () => hung.received.filter((received) => received.headers['x-program-id'] === slow.programId).length;
    for (let attempt = 0; attempt < 4; attempt += 1) {
      await request(gateway.url).get('/api/v1/coupons').set(bearer(slow.key)).expect(503);
    }
    // Its own circuit is open: it fails fast without reaching the service...
    const reachedWhenOpen = reachedBySlow();
    const openedAt = Date.now();
    await request(gateway.url).get('/api/v1/coupons').set(bearer(slow.key)).expect(503);
    expect(reachedBySlow() - reachedWhenOpen).toBeLessThanOrEqual(Math.floor((Date.now() - openedAt) / CIRCUIT_RESET_MS));
    // ...while every other program is served by the same upstream as before.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await request(gateway.url).get('/api/v1/coupons').set(bearer(victim.key)).expect(200);
    }
    expect(gateway.settings.upstreams.coupon).toBe(hung.url);
  } finally {
    hung.hangFor(null);
  }
});

test('answers of any status, 5xx included, never open a circuit: each is relayed from the service', async () => {
  hung.answerWith(500);
  try {
    const reached = () => hung.received.filter((received) => received.url.startsWith('/promotional-codes')).length;
    const before = reached();
    for (let attempt = 0; attempt < 10; attempt += 1) {
      await request(gateway.url).get('/api/v1/promotional-codes').set(bearer(program.key)).expect(500);
    }
    expect(reached()).toBe(before + 10);
  } finally {
    hung.answerWith(200);
  }
  await request(gateway.url).get('/api/v1/promotional-codes').set(bearer(program.key)).expect(200);
});
