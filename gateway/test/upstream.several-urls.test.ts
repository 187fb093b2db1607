import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { gatewaySettingsFromEnv } from '../src/config';
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

/**
 * An upstream setting may name several URLs, comma-separated: the replicas of a service with no
 * load balancer in front of them. The gateway calls them in turn and skips one that refuses a
 * connection for a while, sending that call to another at once.
 */
let first: EchoUpstream;
let second: EchoUpstream;
let gateway: RunningGateway;
let program: ProgramWithKey;
/** A replica that is stopping: it still answers, each answer saying `Connection: close`, as the platform's services do from SIGTERM on. */
let stopping: Server;
let stoppingCalls = 0;

beforeAll(async () => {
  [first, second] = await Promise.all([startEchoUpstream(), startEchoUpstream()]);
  stopping = createServer((_incoming, outgoing) => {
    stoppingCalls += 1;
    outgoing.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end('[]');
  });
  await new Promise<void>((resolve) => stopping.listen(0, '127.0.0.1', resolve));
  const stoppingUrl = `http://127.0.0.1:${(stopping.address() as AddressInfo).port}`;
  gateway = await startGateway({
    upstreams: {
      ...allUpstreams(DEAD_UPSTREAM),
      coupon: `${first.url}, ${second.url}`,
      referral: `${DEAD_UPSTREAM},${first.url}`,
      sale: `${stoppingUrl},${second.url}`,
    },
  });
  program = await createProgramWithKey(gateway);
});

afterAll(async () => {
  await gateway.stop();
  await Promise.all([first.stop(), second.stop(), new Promise((resolve) => stopping.close(resolve))]);
});

const couponCalls = (upstream: EchoUpstream) => upstream.received.filter((received) => received.url.startsWith('/coupons')).length;
const referralCalls = (upstream: EchoUpstream) => upstream.received.filter((received) => received.url.startsWith('/referrals')).length;

test('calls to an upstream with several URLs are shared among them in turn', async () => {
  for (let call = 0; call < 10; call += 1) await request(gateway.url).get('/api/v1/coupons').set(bearer(program.key)).expect(200);
  expect([couponCalls(first), couponCalls(second)]).toEqual([5, 5]);
});

test('a URL that refuses connections costs no call: each goes to a live one, and none answers 503', async () => {
  for (let call = 0; call < 6; call += 1) {
    await request(gateway.url)
      .post('/api/v1/referrals')
      .set(bearer(program.key))
      .send({ email: `r${call}@example.com` })
      .expect(200);
  }
  expect(referralCalls(first)).toBe(6);
});

test('a replica whose answer says it is stopping (Connection: close) gets no further calls for a while', async () => {
  // A client that keeps its connection (supertest asks for `close` unless told, which would be passed on).
  for (let call = 0; call < 6; call += 1)
    await request(gateway.url).get('/api/v1/sales').set(bearer(program.key)).set('connection', 'keep-alive').expect(200);
  expect(stoppingCalls).toBe(1);
  expect(second.received.filter((received) => received.url.startsWith('/sales')).length).toBe(5);
});

test('the URLs of an upstream setting are each checked, and a bad one stops the gateway with the setting named', () => {
  expect(gatewaySettingsFromEnv({ SALE_URL: 'http://sale-0:3004,http://sale-1:3004' }).upstreams.sale).toBe(
    'http://sale-0:3004,http://sale-1:3004',
  );
  expect(() => gatewaySettingsFromEnv({ SALE_URL: 'http://sale-0:3004,sale-1' })).toThrow(
    /SALE_URL.*must be a URL, or URLs separated by commas/,
  );
});
