import request from 'supertest';
import { gatewaySettingsFromEnv } from '../src/config';
import type { RunningGateway } from '../src/gateway';
import { allUpstreams, bearer, createProgramWithKey, DEAD_UPSTREAM, startEchoUpstream, startGateway, type EchoUpstream, type ProgramWithKey } from './support';

/**
 * An upstream setting may name several URLs, comma-separated: the replicas of a service with no
 * load balancer in front of them. The gateway calls them in turn and skips one that refuses a
 * connection for a while, sending that call to another at once.
 */
let first: EchoUpstream;
let second: EchoUpstream;
let gateway: RunningGateway;
let program: ProgramWithKey;

beforeAll(async () => {
  [first, second] = await Promise.all([startEchoUpstream(), startEchoUpstream()]);
  gateway = await startGateway({ upstreams: { ...allUpstreams(DEAD_UPSTREAM), coupon: `${first.url}, ${second.url}`, referral: `${DEAD_UPSTREAM},${first.url}` } });
  program = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await Promise.all([first.stop(), second.stop()]);
});

const couponCalls = (upstream: EchoUpstream) => upstream.received.filter((received) => received.url.startsWith('/coupons')).length;
const referralCalls = (upstream: EchoUpstream) => upstream.received.filter((received) => received.url.startsWith('/referrals')).length;

test('calls to an upstream with several URLs are shared among them in turn', async () => {
  for (let call = 0; call < 10; call += 1) await request(gateway.url).get('/api/v1/coupons').set(bearer(program.key)).expect(200);
  expect([couponCalls(first), couponCalls(second)]).toEqual([5, 5]);
});

test('a URL that refuses connections costs no call: each goes to a live one, and none answers 503', async () => {
  for (let call = 0; call < 6; call += 1) {
    await request(gateway.url).post('/api/v1/referrals').set(bearer(program.key)).send({ email: `r${call}@example.com` }).expect(200);
  }
  expect(referralCalls(first)).toBe(6);
});

test('the URLs of an upstream setting are each checked, and a bad one stops the gateway with the setting named', () => {
  expect(gatewaySettingsFromEnv({ SALE_URL: 'http://sale-0:3004,http://sale-1:3004' }).upstreams.sale).toBe('http://sale-0:3004,http://sale-1:3004');
  expect(() => gatewaySettingsFromEnv({ SALE_URL: 'http://sale-0:3004,sale-1' })).toThrow(/SALE_URL.*must be a URL, or URLs separated by commas/);
});
