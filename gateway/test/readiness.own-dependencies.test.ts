import { bootService, type RunningService } from '@affiliate/platform';
import { testServiceSettings, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildCouponService } from '../../services/coupon/src/service';
import { buildReferralService } from '../../services/referral/src/service';
import type { RunningGateway } from '../src/gateway';
import { bearer, createProgramWithKey, DEAD_UPSTREAM, startGateway, type ProgramWithKey } from './support';

/**
 * Readiness says "this process can serve", never "the services behind me are up": a readiness probe
 * that followed upstreams would take every gateway out of its Service when one service died.
 * Real coupon and referral services; the other upstreams (and the services' own peers) are dead.
 */
let coupon: RunningService;
let referral: RunningService;
let gateway: RunningGateway;
let program: ProgramWithKey;

beforeAll(async () => {
  const exchange = uniqueName('test_events');
  coupon = await bootService(testServiceSettings('coupon', { exchange }), (context) =>
    buildCouponService(context, { affiliateUrl: DEAD_UPSTREAM }),
  );
  referral = await bootService(testServiceSettings('referral', { exchange }), (context) =>
    buildReferralService(context, { affiliateUrl: DEAD_UPSTREAM }),
  );
  gateway = await startGateway({
    exchange,
    upstreams: {
      coupon: coupon.url,
      referral: referral.url,
      affiliate: DEAD_UPSTREAM,
      sale: DEAD_UPSTREAM,
      'webhook-dispatcher': DEAD_UPSTREAM,
    },
  });
  program = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await coupon.stop();
  await referral.stop();
});

test("a dead service leaves the gateway ready and its other routes served; only the dead service's routes answer 503", async () => {
  await request(gateway.url).get('/api/v1/referrals').set(bearer(program.key)).expect(200);
  await referral.stop();

  const readiness = await request(gateway.url).get('/readyz').expect(200);
  expect(readiness.body).toEqual({ status: 'ready', checks: { accepting: true, mongo: true } });
  for (let attempt = 0; attempt < 3; attempt += 1) {
    await request(gateway.url).get('/api/v1/coupons').set(bearer(program.key)).expect(200);
    const dead = await request(gateway.url).get('/api/v1/referrals').set(bearer(program.key)).expect(503);
    expect(dead.body).toMatchObject({ error: 'The referral service is unavailable; retry later' });
  }
  await request(gateway.url).get('/readyz').expect(200);
  await request(gateway.url).get('/healthz').expect(200);
});

test("a service's readiness is its own database, plus the broker only where it consumes events, never another service", async () => {
  // The coupon service consumes affiliate.* events; its affiliate service is dead, which is not its readiness.
  const couponReadiness = await request(coupon.url).get('/readyz').expect(200);
  expect(couponReadiness.body.checks).toEqual({ accepting: true, mongo: true, rabbitmq: true });
  // The referral service consumes nothing (what it publishes waits in its outbox): the database alone.
  const referralService = await bootService(testServiceSettings('referral'), (context) =>
    buildReferralService(context, { affiliateUrl: DEAD_UPSTREAM }),
  );
  try {
    const referralReadiness = await request(referralService.url).get('/readyz').expect(200);
    expect(referralReadiness.body.checks).toEqual({ accepting: true, mongo: true });
  } finally {
    await referralService.stop();
  }
});
