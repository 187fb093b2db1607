import { Affiliate, LINK_MESSAGES, LinkResponse } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import { z } from 'zod';
import { eventsOf, newProgramId, startAffiliateService, type Api, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

const LinkList = z.array(LinkResponse);

async function createAffiliate(api: Api, email: string, affiliateLink?: string): Promise<Affiliate> {
  const response = await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email, affiliateLink });
  expect(response.status).toBe(200);
  return Affiliate.parse(response.body);
}

/** The slugs in the newest affiliate.updated of the affiliate. */
const lastAnnouncedSlugs = (affiliateId: string) => {
  const events = eventsOf(harness, 'affiliate.updated', affiliateId);
  const last = events[events.length - 1];
  return last ? Affiliate.parse(last.data).affiliateLinks.map((link) => link.link) : [];
};

test('POST /links adds a link by affiliateId or affiliateEmail, answers it with stats and fullURLs, and emits affiliate.updated', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const byId = await api.post('/links', { link: 'ann-spring', affiliateId: affiliate.id });
  expect(byId.status).toBe(200);
  expect(LinkResponse.parse(byId.body)).toMatchObject({
    link: 'ann-spring',
    affiliateId: affiliate.id,
    clicks: 0,
    referrals: 0,
    sales: 0,
    totalRevenue: 0,
    fullURLs: [],
  });
  const byEmail = await api.post('/links', { link: 'ann-summer', affiliateEmail: 'ANN@example.com' });
  expect(byEmail.body.affiliateId).toBe(affiliate.id);
  await eventually(() => expect(lastAnnouncedSlugs(affiliate.id)).toEqual(['ann', 'ann-spring', 'ann-summer']));
  const unknown = await api.post('/links', { link: 'x', affiliateEmail: 'nobody@example.com' });
  expect(unknown.status).toBe(400);
  expect(unknown.body.error).toMatch(/^affiliateEmail/);
});

test('a slug with characters other than letters, numbers and hyphens is refused with the exact message', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  for (const link of ['with space', 'under_score', 'ümlaut', 'slash/', '']) {
    const created = await api.post('/links', { link, affiliateId: affiliate.id });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ error: LINK_MESSAGES.invalidCharacters });
  }
  const renamed = await api.put('/links', { link: 'ann', newLink: 'bad.slug' });
  expect(renamed.body).toMatchObject({ error: LINK_MESSAGES.invalidCharacters });
});

test('a slug already used in the program, in any case, is refused with the exact message', async () => {
  const api = harness.api(newProgramId());
  const ann = await createAffiliate(api, 'ann@example.com', 'ann');
  await createAffiliate(api, 'bob@example.com', 'Bob');
  const created = await api.post('/links', { link: 'BOB', affiliateId: ann.id });
  expect(created.status).toBe(400);
  expect(created.body).toMatchObject({ error: LINK_MESSAGES.alreadyExists });
  const renamed = await api.put('/links', { link: 'ann', newLink: 'bob' });
  expect(renamed.body).toMatchObject({ error: LINK_MESSAGES.alreadyExists });
  await harness
    .api(newProgramId())
    .post('/affiliates', { firstName: 'B', lastName: 'B', email: 'b@example.com', affiliateLink: 'bob' })
    .expect(200);
});

test('GET /links finds links by id, link, affiliateId and affiliateEmail, always as an array', async () => {
  const api = harness.api(newProgramId());
  const ann = await createAffiliate(api, 'ann@example.com', 'ann');
  const second = LinkResponse.parse((await api.post('/links', { link: 'ann-2', affiliateId: ann.id })).body);
  await createAffiliate(api, 'bob@example.com', 'bob');
  const slugs = async (query: Record<string, string>) => LinkList.parse((await api.get('/links', query)).body).map((link) => link.link);
  expect(await slugs({ id: second.id })).toEqual(['ann-2']);
  expect(await slugs({ link: 'ANN-2' })).toEqual(['ann-2']);
  expect(await slugs({ affiliateId: ann.id })).toEqual(['ann', 'ann-2']);
  expect(await slugs({ affiliateEmail: 'ann@example.com' })).toEqual(['ann', 'ann-2']);
  expect(await slugs({ link: 'nothing' })).toEqual([]);
  expect(await slugs({})).toEqual(['bob', 'ann-2', 'ann']);
});

test('fullURLs use every destination URL and the URL modifier, keep existing queries, append custom parameters and encode them', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'ann@example.com', 'Ann-1');
  const fullUrls = async () => (await api.get('/links', { affiliateId: affiliate.id })).body[0].fullURLs;
  await harness.setProgram(programId, {
    urlModifier: 'via',
    destinationUrls: [
      { url: 'https://shop.example.com/', params: {} },
      { url: 'https://example.com/landing?utm_source=partner&x=1', params: { campaign: 'spring sale', 'a&b': 'c=d' } },
    ],
  });
  await eventually(async () =>
    expect(await fullUrls()).toEqual([
      { baseUrl: 'https://shop.example.com/', fullUrl: 'https://shop.example.com/?via=Ann-1' },
      {
        baseUrl: 'https://example.com/landing?utm_source=partner&x=1',
        fullUrl: 'https://example.com/landing?utm_source=partner&x=1&via=Ann-1&campaign=spring+sale&a%26b=c%3Dd',
      },
    ]),
  );
  await harness.setProgram(programId, { destinationUrls: [{ url: 'https://shop.example.com/path', params: {} }] });
  await eventually(async () =>
    expect(await fullUrls()).toEqual([{ baseUrl: 'https://shop.example.com/path', fullUrl: 'https://shop.example.com/path?ref=Ann-1' }]),
  );
});

test('PUT /links renames a link in place, keeping its id and statistics, and emits affiliate.updated', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'old-name');
  await api.post('/clicks', { link: 'old-name' }).expect(200);
  const renamed = await api.put('/links', { linkId: affiliate.affiliateLinks[0]?.id, newLink: 'New-Name' });
  expect(renamed.status).toBe(200);
  expect(LinkResponse.parse(renamed.body)).toMatchObject({ id: affiliate.affiliateLinks[0]?.id, link: 'New-Name', clicks: 1 });
  expect((await api.get('/links', { link: 'old-name' })).body).toEqual([]);
  await eventually(() => expect(lastAnnouncedSlugs(affiliate.id)).toEqual(['New-Name']));
  expect((await api.put('/links', { link: 'old-name', newLink: 'x' })).status).toBe(404);
});

test('DELETE /links removes a link, releases its slug and emits affiliate.updated, but never the last link', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'keep');
  await api.post('/links', { link: 'drop', affiliateId: affiliate.id }).expect(200);
  const deleted = await api.delete('/links', { link: 'DROP' });
  expect(deleted.status).toBe(200);
  expect(deleted.body).toMatchObject({ deleted: true });
  expect((await api.get('/links', { affiliateId: affiliate.id })).body.map((link: LinkResponse) => link.link)).toEqual(['keep']);
  await eventually(() => expect(lastAnnouncedSlugs(affiliate.id)).toEqual(['keep']));
  await eventually(async () => expect((await api.post('/links', { link: 'drop', affiliateId: affiliate.id })).status).toBe(200));

  await api.delete('/links', { link: 'drop' }).expect(200);
  const last = await api.delete('/links', { link: 'keep' });
  expect(last.status).toBe(400);
  expect(last.body.error).toMatch(/last link/);
  expect((await api.get('/links', { affiliateId: affiliate.id })).body).toHaveLength(1);
});

test("two simultaneous deletions of an affiliate's last two links leave at least one", async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'one');
  await api.post('/links', { link: 'two', affiliateId: affiliate.id }).expect(200);
  await Promise.all([api.delete('/links', { link: 'one' }), api.delete('/links', { link: 'two' })]);
  expect((await api.get('/links', { affiliateId: affiliate.id })).body.length).toBeGreaterThanOrEqual(1);
});
