/**
 * A second, independent validator over real answers: openapi-core (Python, the validator a Python
 * integrator's tests would use) checks every answer of a tour of the API against the document the
 * gateway publishes. The drift check (contract.ts, Ajv) checks every answer of every system test;
 * this proves a well-kept OpenAPI validator of another ecosystem reads the document the same way.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '@affiliate/platform/testing';
import { ADMIN_TOKEN, apiClient, recordExchanges, Subscriber, System } from '../harness';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

let system: System;
const subscriber = new Subscriber();

beforeAll(async () => {
  system = await System.start();
}, 180_000);
afterAll(async () => {
  await subscriber.stop();
  await system?.stop();
});

test('openapi-core finds every answer of a tour of the API (successes, lists with Link, every error status) as the published document says', async () => {
  const document = (await apiClient(system.gatewayUrl, undefined).get('/api/v1/openapi.json')).body;
  const exchanges = recordExchanges();
  const { api, programId } = await system.createProgram();
  const anonymous = apiClient(`${system.gatewayUrl}/api/v1`, undefined);
  const admin = apiClient(system.gatewayUrl, ADMIN_TOKEN);

  const affiliate = (await api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com' })).body;
  await api.post('/affiliates', { firstName: 'Bob', lastName: 'Byron', email: 'bob@example.com' });
  await api.get('/affiliates?limit=1'); // a page with a Link to the next
  await api.get(`/affiliates?id=${affiliate.id}`);
  await api.get('/affiliates?email=nobody@example.com'); // 200 null
  await api.post('/links', { link: 'ada-tour', affiliateId: affiliate.id });
  await api.get('/links?link=ada-tour');
  const click = (await api.post('/clicks', { link: 'ada-tour' })).body;
  const referral = (await api.post('/referrals', { clickId: click.clickId, email: 'customer@example.com' })).body;
  await api.put('/referrals', { referralId: referral.id, plan: 'pro' });
  await api.put('/referrals', { referralId: '00000000-0000-4000-8000-000000000000', plan: 'pro' }); // numbered error shape
  const coupon = (await api.post('/coupons', { name: 'Tour', percentOff: 20 }, { 'Idempotency-Key': 'tour-coupon' })).body;
  await api.post('/coupons', { name: 'Tour', percentOff: 20 }, { 'Idempotency-Key': 'tour-coupon' }); // replayed
  await api.post('/coupons', { name: 'Tour', percentOff: 30 }, { 'Idempotency-Key': 'tour-coupon' }); // 409
  await api.post('/coupons', { name: 'Broken', percentOff: 150 }); // 400
  await api.get('/coupons?id=00000000-0000-4000-8000-000000000000'); // 404
  const code = (await api.post('/promotional-codes', { couponId: coupon.id, code: 'TOUR20', affiliateId: affiliate.id })).body;
  const sale = (await api.post('/sales', { promoCode: 'TOUR20', totalEarned: 100, externalId: 'pay_tour' })).body;
  await api.get(`/sales?affiliateId=${affiliate.id}`);
  await api.request('GET', '/payouts', undefined, { accept: 'text/csv' });
  await api.get(`/reports/affiliates?from=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}`);
  const endpoint = (await api.post('/webhook-endpoints', { url: await subscriber.start(), eventTypes: ['sale.*'] })).body;
  await api.post('/sales', { referralId: referral.id, totalEarned: 10 });
  await eventually(
    async () => expect((await api.get(`/webhook-deliveries?endpointId=${endpoint.id}`)).body.length).toBeGreaterThan(0),
    30_000,
  );
  await api.get('/event-types');
  await api.delete('/sales', { saleId: sale.id });
  await api.delete('/promotional-codes', { promotionalCodeId: code.id });
  await api.delete('/coupons', { couponId: coupon.id });
  await api.delete('/coupons', { couponId: coupon.id }); // numbered error shape
  await anonymous.get('/coupons'); // 401 with WWW-Authenticate
  await admin.get(`/admin/v1/programs/${programId}`);
  await admin.get('/admin/v1/audit-records?limit=1');
  await apiClient(system.gatewayUrl, 'wrong-admin-token').get('/admin/v1/programs'); // 401

  const statuses = new Set(exchanges.map((exchange) => exchange.status));
  expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400, 401, 404, 409]));
  const directory = mkdtempSync(join(tmpdir(), 'openapi-core-'));
  try {
    writeFileSync(join(directory, 'openapi.json'), JSON.stringify(document));
    writeFileSync(join(directory, 'exchanges.json'), JSON.stringify(exchanges));
    const outcome = await run(
      'bash',
      [join(ROOT, 'scripts/openapi-core-check.sh'), join(directory, 'openapi.json'), join(directory, 'exchanges.json')],
      {
        timeout: 280_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    ).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? -1,
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
      }),
    );
    expect({
      code: outcome.code,
      problems: outcome.stdout.split('\n').filter(Boolean),
      stderr: outcome.code === 0 ? '' : outcome.stderr.slice(-2000),
    }).toEqual({ code: 0, problems: [], stderr: '' });
    expect(outcome.stderr).toContain(`openapi-core: ${exchanges.length} answers, 0 not as documented`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}, 300_000);
