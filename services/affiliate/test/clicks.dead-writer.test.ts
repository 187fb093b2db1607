import { Click, LinkResponse } from '@affiliate/contracts';
import { createRepositories, type Repositories } from '../src/data-access/repositories';
import { createAffiliate, newProgramId, startAffiliateService, type Api, type Harness } from './affiliate-service';

/**
 * A click is claimed for its (link, visitor) pair, then stored: two writes. A process killed between
 * them leaves the claim without its click, and the visitor's retry (its answer was lost) is a repeat
 * of that claim. The state is made exactly here: the click's entry removed from the link's activity.
 */
let harness: Harness;
let repositories: Repositories;
beforeAll(async () => {
  harness = await startAffiliateService();
  repositories = createRepositories(harness.service.context);
});
afterAll(async () => {
  await harness.stop();
});

const clicksOn = async (api: Api, link: string) => LinkResponse.parse((await api.get('/links', { link })).body[0]).clicks;
const click = async (api: Api, body: Record<string, unknown>) => {
  const response = await api.post('/clicks', body);
  expect(response.status).toBe(200);
  return Click.parse(response.body);
};

/** A claim whose click was never stored, as a process killed between the two writes leaves it. */
async function claimWithoutItsClick(programId: string, api: Api, visitorId: string): Promise<number> {
  const first = await click(api, { link: 'ann', visitorId, landingUrl: 'https://shop.example/first' });
  expect(first.counted).toBe(true);
  const { connection } = harness.service.context;
  await connection.collection('link_activity').deleteOne({ programId, kind: 'click', sourceId: String(first.clickId) });
  await connection.collection('visitors').deleteMany({ programId });
  expect(await clicksOn(api, 'ann')).toBe(0);
  return first.clickId as number;
}

test('a repeat whose claim has no click stores it under the claim id: the link counts it once, however often the visitor comes back', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  await createAffiliate(api, 'ann@example.com', 'ann');
  const clickId = await claimWithoutItsClick(programId, api, 'visitor-dead-0001');

  expect(await click(api, { link: 'ann', visitorId: 'visitor-dead-0001', landingUrl: 'https://shop.example/again' })).toMatchObject({
    clickId,
    counted: false,
    reason: 'DUPLICATE',
  });
  expect(await clicksOn(api, 'ann')).toBe(1);
  expect(await repositories.linkActivity.click(programId, clickId)).toMatchObject({
    visitorId: 'visitor-dead-0001',
    landingUrl: 'https://shop.example/again',
  });
  expect((await repositories.visitors.clicksOf(programId, 'visitor-dead-0001')).map((each) => each.clickId)).toEqual([clickId]);

  await Promise.all([1, 2, 3].map(() => click(api, { link: 'ann', visitorId: 'visitor-dead-0001' })));
  expect(await clicksOn(api, 'ann')).toBe(1);
});

test('a claimer that was only slow finds its click stored by a repeat and gives it its own details: counted once, its other clicks stored', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const clickId = await claimWithoutItsClick(programId, api, 'visitor-slow-0001');
  await click(api, { link: 'ann', visitorId: 'visitor-slow-0001', landingUrl: 'https://shop.example/repeat' });
  expect(await clicksOn(api, 'ann')).toBe(1);

  // The slow claimer's batch now lands: its click, beside another click of the batch.
  const linkId = (await repositories.linkActivity.click(programId, clickId))?.linkId as string;
  const at = new Date();
  const entry = (id: number, visitorId: string) => ({
    clickId: id,
    linkId,
    affiliateId: affiliate.id,
    amountCents: 0,
    removed: false,
    sourceUpdatedAt: at,
    landingUrl: 'https://shop.example/claimed',
    referrer: null,
    visitorId,
    createdAt: at,
  });
  await repositories.linkActivity.recordClicks(programId, [
    entry(clickId, 'visitor-slow-0001'),
    entry(clickId + 1_000_000, 'visitor-slow-0002'),
  ]);
  expect(await clicksOn(api, 'ann')).toBe(2);
  expect(await repositories.linkActivity.click(programId, clickId)).toMatchObject({ landingUrl: 'https://shop.example/claimed' });
  expect(await repositories.linkActivity.click(programId, clickId + 1_000_000)).toMatchObject({ visitorId: 'visitor-slow-0002' });
});
