import { LINK_MESSAGES, LinkResponse } from '@affiliate/contracts';
import { createAffiliate, newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let forever: Harness;
let noGrace: Harness;
beforeAll(async () => {
  [forever, noGrace] = await Promise.all([startAffiliateService(), startAffiliateService({ previousLinkDays: 0 })]);
});
afterAll(async () => {
  await Promise.all([forever.stop(), noGrace.stop()]);
});

const linkNamed = async (api: ReturnType<Harness['api']>, slug: string) =>
  LinkResponse.parse((await api.get('/links', { link: slug }).expect(200)).body[0]);

test('after a rename, clicks and referrals on the old slug still count on the same link, which lists it in previousLinks', async () => {
  const api = forever.api(newProgramId());
  const affiliate = await createAffiliate(api, 'ann@example.com', 'spring-sale');
  const linkId = affiliate.affiliateLinks[0]!.id;
  await api.put('/links', { linkId, newLink: 'summer-sale' }).expect(200);

  const click = await api.post('/clicks', { link: 'spring-sale' }).expect(200);
  expect(click.body).toMatchObject({ link: 'summer-sale', affiliateId: affiliate.id });
  const attribution = await api.get('/internal/attribution', { link: 'spring-sale' }).expect(200);
  expect(attribution.body).toMatchObject({ affiliateId: affiliate.id, linkId });

  const link = await linkNamed(api, 'summer-sale');
  expect(link).toMatchObject({ id: linkId, clicks: 1, previousLinks: [{ link: 'spring-sale', reservedUntil: null }] });
});

test('the old slug stays reserved for its link: another affiliate cannot take it, the link can take it back', async () => {
  const api = forever.api(newProgramId());
  const ann = await createAffiliate(api, 'ann@example.com', 'ann-deals');
  await createAffiliate(api, 'bob@example.com', 'bob-deals');
  await api.put('/links', { link: 'ann-deals', newLink: 'ann-offers' }).expect(200);

  const taken = await api.post('/links', { link: 'ann-deals', affiliateEmail: 'bob@example.com' }).expect(400);
  expect(taken.body.error).toBe(LINK_MESSAGES.alreadyExists);
  expect((await api.put('/links', { link: 'bob-deals', newLink: 'ANN-DEALS' }).expect(400)).body.error).toBe(LINK_MESSAGES.alreadyExists);

  const back = LinkResponse.parse((await api.put('/links', { link: 'ann-offers', newLink: 'ann-deals' }).expect(200)).body);
  expect(back).toMatchObject({
    id: ann.affiliateLinks[0]!.id,
    link: 'ann-deals',
    previousLinks: [{ link: 'ann-offers', reservedUntil: null }],
  });
});

test('past the configured period the old slug leads nowhere, and another affiliate who takes it gets its clicks', async () => {
  const api = noGrace.api(newProgramId());
  await createAffiliate(api, 'ann@example.com', 'ann-deals');
  const bob = await createAffiliate(api, 'bob@example.com', 'bob-deals');
  await api.put('/links', { link: 'ann-deals', newLink: 'ann-offers' }).expect(200);

  expect((await api.post('/clicks', { link: 'ann-deals' }).expect(400)).body.error).toBe(
    'link: no referral link "ann-deals" in this program',
  );
  expect((await linkNamed(api, 'ann-offers')).previousLinks).toEqual([]);

  await api.post('/links', { link: 'ann-deals', affiliateId: bob.id }).expect(200);
  expect((await api.post('/clicks', { link: 'ann-deals' }).expect(200)).body).toMatchObject({ link: 'ann-deals', affiliateId: bob.id });
});

test('deleting a renamed link frees its old slugs too', async () => {
  const api = forever.api(newProgramId());
  const ann = await createAffiliate(api, 'ann@example.com', 'ann-first');
  await api.post('/links', { link: 'ann-second', affiliateId: ann.id }).expect(200);
  await api.put('/links', { link: 'ann-second', newLink: 'ann-third' }).expect(200);
  await api.delete('/links', { link: 'ann-third' }).expect(200);
  await api.post('/clicks', { link: 'ann-second' }).expect(400);
  await api.post('/links', { link: 'ann-second', affiliateId: ann.id }).expect(200);
});
