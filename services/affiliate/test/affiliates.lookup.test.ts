import { Affiliate } from '@affiliate/contracts';
import { createAffiliate, newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

test('GET /affiliates?id= finds an affiliate by its id', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com');
  const response = await api.get('/affiliates', { id: affiliate.id });
  expect(Affiliate.parse(response.body)).toEqual(affiliate);
});

test('GET /affiliates?id= finds an affiliate by one of its slugs, in any case', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'Ann-Deals');
  expect((await api.get('/affiliates', { id: 'ann-deals' })).body.id).toBe(affiliate.id);
});

test('GET /affiliates?id= with an all-digit value tries it as a click id first, then as a slug', async () => {
  const api = harness.api(newProgramId());
  const clicked = await createAffiliate(api, 'clicked@example.com', 'clicked');
  const numericSlug = await createAffiliate(api, 'numeric@example.com', '1');
  const click = await api.post('/clicks', { link: 'clicked' });
  expect(click.body.clickId).toBe(1);
  expect((await api.get('/affiliates', { id: '1' })).body.id).toBe(clicked.id);
  expect((await api.get('/affiliates', { id: '999' })).body).toBeNull();
  await api.post('/affiliates', { firstName: 'N', lastName: 'S', email: 'n2@example.com', affiliateLink: '999' }).expect(200);
  expect((await api.get('/affiliates', { id: '999' })).body.email).toBe('n2@example.com');
  expect(numericSlug.affiliateLinks[0]?.link).toBe('1');
});

test('GET /affiliates?email= finds an affiliate by email, in any case', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'Ann@Example.com');
  expect((await api.get('/affiliates', { email: 'ann@example.COM' })).body.id).toBe(affiliate.id);
});

test('GET /affiliates answers 200 with body null when nothing matches', async () => {
  const api = harness.api(newProgramId());
  const queries: Record<string, string>[] = [
    { id: 'no-such-slug' },
    { id: '00000000-0000-4000-8000-000000000000' },
    { id: '12345' },
    { email: 'nobody@example.com' },
  ];
  for (const query of queries) {
    const response = await api.get('/affiliates', query);
    expect(response.status).toBe(200);
    expect(response.body).toBeNull();
  }
});

test('GET /affiliates without parameters lists every affiliate newest first, paged with a Link header', async () => {
  const api = harness.api(newProgramId());
  const created: Affiliate[] = [];
  for (const name of ['a', 'b', 'c']) created.push(await createAffiliate(api, `${name}@example.com`));
  const all = await api.get('/affiliates');
  expect(all.body.map((affiliate: Affiliate) => affiliate.email)).toEqual(['c@example.com', 'b@example.com', 'a@example.com']);
  all.body.forEach((affiliate: unknown) => Affiliate.parse(affiliate));

  const first = await api.get('/affiliates', { limit: '2' });
  expect(first.body).toHaveLength(2);
  expect(first.headers.link).toBe(`</affiliates?limit=2&startingAfter=${created[1]?.id}>; rel="next"`);
  const second = await api.get('/affiliates', { limit: '2', startingAfter: String(created[1]?.id) });
  expect(second.body.map((affiliate: Affiliate) => affiliate.id)).toEqual([created[0]?.id]);
  expect(second.headers.link).toBeUndefined();
});

test('affiliates of one program are invisible to another', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann-only');
  const other = harness.api(newProgramId());
  expect((await other.get('/affiliates', { id: affiliate.id })).body).toBeNull();
  expect((await other.get('/affiliates', { id: 'ann-only' })).body).toBeNull();
  expect((await other.get('/affiliates', { email: 'ann@example.com' })).body).toBeNull();
  expect((await other.get('/affiliates')).body).toEqual([]);
  expect((await other.get('/links', { affiliateId: affiliate.id })).body).toEqual([]);
  expect((await other.put('/affiliates', { affiliateId: affiliate.id, firstName: 'X' })).status).toBe(404);
  expect((await other.delete('/affiliates', { affiliateId: affiliate.id })).status).toBe(404);
  expect((await other.post('/clicks', { link: 'ann-only' })).status).toBe(400);
  expect((await other.get('/internal/affiliates', { id: affiliate.id })).status).toBe(404);
});
