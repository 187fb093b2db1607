import { Affiliate, LINK_MESSAGES } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import { createAffiliate, eventsOf, newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

const slugsOf = (affiliate: Affiliate) => affiliate.affiliateLinks.map((link) => link.link);

test('PUT /affiliates changes profile fields, status and commissionRate and emits affiliate.updated with the stored state', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com');
  const response = await api.put('/affiliates', {
    affiliateId: affiliate.id,
    firstName: 'Anna',
    email: 'anna@example.com',
    status: 'REJECTED',
    commissionRate: 42,
  });
  expect(response.status).toBe(200);
  const updated = Affiliate.parse(response.body);
  expect(updated).toMatchObject({ firstName: 'Anna', lastName: 'Lee', email: 'anna@example.com', status: 'REJECTED', commissionRate: 42 });
  expect((await api.get('/affiliates', { email: 'anna@example.com' })).body.id).toBe(affiliate.id);
  const [event] = await eventually(() => {
    const events = eventsOf(harness, 'affiliate.updated', affiliate.id);
    expect(events).toHaveLength(1);
    return events;
  });
  expect(Affiliate.parse(event?.data)).toEqual(updated);
});

test('PUT /affiliates affiliateLink appends a slug and never renames or removes one', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'first');
  const appended = await api.put('/affiliates', { affiliateId: affiliate.id, affiliateLink: 'second' });
  expect(slugsOf(Affiliate.parse(appended.body))).toEqual(['first', 'second']);
  const again = await api.put('/affiliates', { affiliateId: affiliate.id, affiliateLink: 'SECOND' });
  expect(slugsOf(Affiliate.parse(again.body))).toEqual(['first', 'second']);
  await eventually(() => {
    const [event] = eventsOf(harness, 'affiliate.updated', affiliate.id);
    expect(slugsOf(Affiliate.parse(event?.data))).toEqual(['first', 'second']);
  });
});

test('PUT /affiliates refuses a slug or an email another affiliate has, changing nothing', async () => {
  const api = harness.api(newProgramId());
  await createAffiliate(api, 'taken@example.com', 'taken');
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const slug = await api.put('/affiliates', { affiliateId: affiliate.id, affiliateLink: 'Taken', firstName: 'X' });
  expect(slug.status).toBe(400);
  expect(slug.body).toMatchObject({ error: LINK_MESSAGES.alreadyExists });
  const email = await api.put('/affiliates', { affiliateId: affiliate.id, email: 'TAKEN@example.com', affiliateLink: 'ann-two' });
  expect(email.status).toBe(400);
  expect(email.body.error).toMatch(/already exists/);
  const stored = Affiliate.parse((await api.get('/affiliates', { id: affiliate.id })).body);
  expect(stored).toMatchObject({ firstName: 'Ann', email: 'ann@example.com' });
  expect(slugsOf(stored)).toEqual(['ann']);
});

test('PUT /affiliates on an unknown affiliate is a 404', async () => {
  const response = await harness
    .api(newProgramId())
    .put('/affiliates', { affiliateId: '00000000-0000-4000-8000-000000000000', firstName: 'X' });
  expect(response.status).toBe(404);
  expect(response.body.error).toMatch(/No affiliate/);
});

test('DELETE /affiliates removes the affiliate, releases its email and slugs, and emits affiliate.deleted with only the id', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const response = await api.delete('/affiliates', { affiliateId: affiliate.id });
  expect(response.status).toBe(200);
  expect(response.body).toEqual({ id: affiliate.id, deleted: true });
  expect((await api.get('/affiliates', { id: affiliate.id })).body).toBeNull();
  expect((await api.get('/affiliates', { id: 'ann' })).body).toBeNull();
  expect((await api.get('/links', { affiliateId: affiliate.id })).body).toEqual([]);
  expect((await api.delete('/affiliates', { affiliateId: affiliate.id })).status).toBe(404);
  await createAffiliate(api, 'ann@example.com', 'ann');
  await eventually(() => {
    const events = eventsOf(harness, 'affiliate.deleted', affiliate.id);
    expect(events.map((event) => event.data)).toEqual([{ id: affiliate.id }]);
  });
});
