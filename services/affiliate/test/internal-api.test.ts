import { Attribution, InternalAffiliate } from '@affiliate/contracts';
import { newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

test('GET /internal/affiliates resolves an affiliate by id or email within the program, 404 otherwise', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const created = await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', commissionRate: 30 });
  // Without a plan of its own or a default plan, the affiliate earns its own rate, as before plans existed.
  const ownRate = { id: null, commissionType: 'PERCENTAGE', rate: 30, recurring: 'FOREVER', holdDays: 30, minimumPayout: null, tierRate: null };
  const expected = {
    id: created.body.id,
    firstName: 'Ann',
    lastName: 'Lee',
    email: 'ann@example.com',
    status: 'ACTIVE',
    commissionRate: 30,
    plan: expect.objectContaining(ownRate),
    payoutDetails: null,
  };
  expect(InternalAffiliate.parse((await api.get('/internal/affiliates', { id: created.body.id })).body)).toEqual(expected);
  expect(InternalAffiliate.parse((await api.get('/internal/affiliates', { email: 'ANN@example.com' })).body)).toEqual(expected);
  const missing = await api.get('/internal/affiliates', { email: 'nobody@example.com' });
  expect(missing.status).toBe(404);
  expect(missing.body.error).toMatch(/No affiliate/);
  expect((await harness.api(newProgramId()).get('/internal/affiliates', { id: created.body.id })).status).toBe(404);
  expect((await api.get('/internal/affiliates')).status).toBe(400);
});

test('GET /internal/attribution resolves a click id, a slug or an affiliate to its affiliate, 404 otherwise', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = (await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', affiliateLink: 'Ann' })).body;
  const link = affiliate.affiliateLinks[0];
  const click = (await api.post('/clicks', { link: 'ann' })).body;
  const attribution = async (query: Record<string, string>) => Attribution.parse((await api.get('/internal/attribution', query)).body);
  expect(await attribution({ clickId: String(click.clickId) })).toEqual({ affiliateId: affiliate.id, linkId: link.id, link: 'Ann', clickId: click.clickId });
  expect(await attribution({ link: 'ANN' })).toEqual({ affiliateId: affiliate.id, linkId: link.id, link: 'Ann', clickId: null });
  expect(await attribution({ affiliateId: affiliate.id })).toEqual({ affiliateId: affiliate.id, linkId: null, link: null, clickId: null });
  expect(await attribution({ affiliateEmail: 'ann@example.com' })).toEqual({ affiliateId: affiliate.id, linkId: null, link: null, clickId: null });
  const unresolvable: Record<string, string>[] = [{ clickId: '999' }, { link: 'nobody' }, { affiliateEmail: 'nobody@example.com' }];
  for (const query of unresolvable) {
    expect((await api.get('/internal/attribution', query)).status).toBe(404);
  }
  expect((await harness.api(newProgramId()).get('/internal/attribution', { clickId: String(click.clickId) })).status).toBe(404);
  expect((await api.get('/internal/attribution', { clickId: '-1' })).status).toBe(400);
});
