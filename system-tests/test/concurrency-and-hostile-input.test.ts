import { eventually } from '@affiliate/platform/testing';
import { Subscriber, System, type Api } from '../harness';

let system: System;
let api: Api;
const subscriber = new Subscriber();

beforeAll(async () => {
  system = await System.start();
  // A rate limit above the bursts below: the limiter has tests of its own.
  ({ api } = await system.createProgram({ rateLimit: { points: 10_000, duration: 1 } }));
  await api.post('/webhook-endpoints', { url: await subscriber.start(), eventTypes: ['coupon.updated'] });
}, 180_000);
afterAll(async () => {
  await subscriber.stop();
  await system?.stop();
});

describe('concurrency', () => {
  test('200 concurrent sales against limited codes and a limited coupon: counters exact, never past a limit', async () => {
    const affiliate = (await api.post('/affiliates', { firstName: 'Race', lastName: 'Track', email: 'race@example.com' })).body;
    const coupon = (await api.post('/coupons', { name: 'Limited', percentOff: 10, maxRedemptions: 50 })).body;
    await api.post('/promotional-codes', { couponId: coupon.id, code: 'RACE-A', affiliateId: affiliate.id, maxRedemptions: 30 });
    await api.post('/promotional-codes', { couponId: coupon.id, code: 'RACE-B', affiliateId: affiliate.id });

    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) => api.post('/sales', { promoCode: index % 2 ? 'RACE-A' : 'RACE-B', totalEarned: 10, externalId: `race_${index}` })),
    );
    const statuses = answers.map((answer) => answer.status);
    const others = answers.filter((answer) => answer.status !== 200 && answer.status !== 400).slice(0, 3);
    expect(others.map((answer) => `${answer.status} ${JSON.stringify(answer.body)}`)).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 400)).toHaveLength(150);

    const [codeA, codeB] = await Promise.all([api.get('/promotional-codes?code=RACE-A'), api.get('/promotional-codes?code=RACE-B')]);
    expect(codeA.body.timesRedeemed).toBeLessThanOrEqual(30);
    expect(codeA.body.timesRedeemed + codeB.body.timesRedeemed).toBe(50);
    expect((await api.get(`/coupons?id=${coupon.id}`)).body.timesRedeemed).toBe(50);
    expect((await api.get(`/sales?affiliateId=${affiliate.id}`)).body).toHaveLength(50);
  }, 120_000);

  test('50 concurrent affiliate sign-ups whose emails share a local part all succeed with distinct slugs', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) => api.post('/affiliates', { firstName: 'Sam', lastName: `No${index}`, email: `sam@shop${index}.example.com` })),
    );
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200)).toEqual([]);
    const slugs = answers.map((answer) => answer.body.affiliateLinks[0].link.toLowerCase());
    expect(new Set(slugs).size).toBe(50);
  }, 120_000);

  test('parallel PUTs on one coupon leave one consistent final state, announced by the last coupon.updated', async () => {
    const coupon = (await api.post('/coupons', { name: 'Contended', percentOff: 10 })).body;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) => api.put('/coupons', { couponId: coupon.id, name: `version ${index}`, metadata: { version: String(index) } })),
    );
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const final = (await api.get(`/coupons?id=${coupon.id}`)).body;
    // Name and metadata always come from the same request: no write was half applied.
    expect(final.name).toBe(`version ${final.metadata.version}`);
    const succeeded = answers.filter((answer) => answer.status === 200).length;
    await eventually(() => {
      const updates = subscriber.events('coupon.updated').filter((delivery) => delivery.body.data.id === coupon.id);
      expect(updates).toHaveLength(succeeded);
      const newest = updates.reduce((latest, delivery) => (delivery.body.data.updatedAt > latest.body.data.updatedAt ? delivery : latest));
      expect(newest.body.data.name).toBe(final.name);
    }, 30_000);
  }, 120_000);
});

describe('hostile input through the gateway: a clear 4xx, and nothing changes', () => {
  const couponCount = async () => (await api.get('/coupons?limit=1000')).body.length as number;

  test('a 10 MB body is refused with 413', async () => {
    const before = await couponCount();
    const response = await api.post('/coupons', { name: 'x'.repeat(10 * 1024 * 1024), percentOff: 10 });
    expect(response.status).toBe(413);
    expect(await couponCount()).toBe(before);
  });

  test('deeply nested JSON is refused with 400', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const response = await api.request('POST', '/coupons', deep, { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
  });

  test('invalid UTF-8 is refused with 400', async () => {
    const response = await fetch(`${system.gatewayUrl}/api/v1/coupons`, {
      method: 'POST',
      headers: { authorization: (await adminKeyHeader()).authorization, 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('","percentOff":10}')]),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'Request body is not valid UTF-8' });
  });

  test('prototype-pollution keys are refused and pollute nothing', async () => {
    const before = await couponCount();
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const response = await api.request('POST', '/coupons', `{"name":"p","percentOff":10,"${key}":{"polluted":true}}`, { 'content-type': 'application/json' });
      expect({ key, status: response.status }).toEqual({ key, status: 400 });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await couponCount()).toBe(before);
  });

  test('operator objects and $-prefixed keys in string fields are refused (no NoSQL injection)', async () => {
    const injections: [string, string, unknown][] = [
      ['POST', '/coupons', { name: { $gt: '' }, percentOff: 10 }],
      ['POST', '/promotional-codes', { couponId: { $ne: null }, code: 'INJ' }],
      ['POST', '/affiliates', { firstName: 'a', lastName: 'b', email: { $regex: '.*' } }],
      ['POST', '/sales', { promoCode: { $exists: true }, totalEarned: 1 }],
      ['POST', '/referrals', { affiliateEmail: { $ne: 'x' }, email: 'victim@example.com' }],
      ['PUT', '/coupons', { couponId: { $ne: '' }, name: 'all of them' }],
      ['DELETE', '/promotional-codes', { promotionalCodeId: { $ne: '' } }],
      ['POST', '/coupons', { name: 'x', percentOff: 10, $where: 'sleep(1000)' }],
    ];
    for (const [method, path, body] of injections) {
      const response = await api.request(method, path, body);
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 400 });
    }
    for (const query of ['/coupons?id[$ne]=x', '/affiliates?email[$regex]=.*', '/promotional-codes?code[$gt]=', '/sales?id[$ne]=1']) {
      const response = await api.get(query);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
  });

  test('header injection in slugs and codes is refused', async () => {
    const affiliate = (await api.post('/affiliates', { firstName: 'Head', lastName: 'Er', email: 'header@example.com' })).body;
    const coupon = (await api.post('/coupons', { name: 'headers', percentOff: 10 })).body;
    const link = await api.post('/links', { link: 'evil\r\nSet-Cookie: session=stolen', affiliateId: affiliate.id });
    expect(link.status).toBe(400);
    expect(link.body.error).toBe('Link can only contain letters, numbers, and hyphens');
    const code = await api.post('/promotional-codes', { couponId: coupon.id, code: 'EVIL\r\nX-Injected: 1' });
    expect(code.status).toBe(400);
    expect(code.headers.get('x-injected')).toBeNull();
  });
});

async function adminKeyHeader() {
  const { key } = await system.createProgram();
  return { authorization: `Bearer ${key}` };
}
