import { Click, ExplainedAttribution, type Program } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { eventually } from '@affiliate/platform/testing';
import { applyProgramSettings, createAffiliate, newProgramId, startAffiliateService, type Api, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
const VISITOR = 'visitor-0001';

/**
 * A program whose visitor clicked three affiliates' links: `early` 20 days ago, `middle` 10 days
 * ago, `late` an hour ago; its settings applied before the clicks.
 */
async function visitorWithThreeClicks(settings: Partial<Program>) {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliates = {
    early: await createAffiliate(api, 'early@example.com', 'early'),
    middle: await createAffiliate(api, 'middle@example.com', 'middle'),
    late: await createAffiliate(api, 'late@example.com', 'late'),
  };
  await applyProgramSettings(harness, programId, 'early', settings);
  const clickOf = async (link: string, occurredAt: string) =>
    Click.parse((await api.post('/clicks', { link, visitorId: VISITOR, occurredAt })).body);
  const clicks = {
    early: await clickOf('early', daysAgo(20)),
    middle: await clickOf('middle', daysAgo(10)),
    late: await clickOf('late', daysAgo(1 / 24)),
  };
  return { programId, api, affiliates, clicks };
}

const attribution = async (api: Api, query: Record<string, string>) => {
  const response = await api.get('/internal/attribution', query);
  expect(response.status).toBe(200);
  return ExplainedAttribution.parse(response.body);
};

test("FIRST_CLICK credits the visitor's earliest click still within the attribution window", async () => {
  const { api, affiliates, clicks } = await visitorWithThreeClicks({ attributionModel: 'FIRST_CLICK', attributionWindowDays: 15 });
  const resolved = await attribution(api, { visitorId: VISITOR });
  expect(resolved).toMatchObject({ affiliateId: affiliates.middle.id, link: 'middle', clickId: clicks.middle.clickId });
  expect(resolved.reason).toMatchObject({ method: 'VISITOR', clickId: clicks.middle.clickId, affiliateId: affiliates.middle.id });
  // Ten days, give or take the seconds the test took.
  expect(Math.round((resolved.reason.ageSeconds ?? 0) / 86_400)).toBe(10);
});

test("LAST_CLICK credits the visitor's latest click within the attribution window", async () => {
  const { api, affiliates, clicks } = await visitorWithThreeClicks({ attributionModel: 'LAST_CLICK', attributionWindowDays: 15 });
  const resolved = await attribution(api, { visitorId: VISITOR });
  expect(resolved).toMatchObject({
    affiliateId: affiliates.late.id,
    clickId: clicks.late.clickId,
    reason: { method: 'VISITOR', clickId: clicks.late.clickId },
  });
});

test("without an attribution window a visitor's clicks never expire", async () => {
  const { api, affiliates, clicks } = await visitorWithThreeClicks({ attributionModel: 'FIRST_CLICK', attributionWindowDays: null });
  expect(await attribution(api, { visitorId: VISITOR })).toMatchObject({ affiliateId: affiliates.early.id, clickId: clicks.early.clickId });
});

test('a visitor with no click in the program, or none within the window, does not resolve', async () => {
  const { api } = await visitorWithThreeClicks({ attributionWindowDays: 30 });
  const unknown = await api.get('/internal/attribution', { visitorId: 'visitor-never-seen' });
  expect(unknown.status).toBe(404);
  expect(unknown.body.error).toMatch(/visitor-never-seen/);
  // The same visitor id in another program is another visitor.
  expect((await harness.api(newProgramId()).get('/internal/attribution', { visitorId: VISITOR })).status).toBe(404);

  const { api: shortApi } = await visitorWithThreeClicks({ attributionWindowDays: 1 });
  await shortApi.post('/clicks', { link: 'early', visitorId: 'visitor-0002', occurredAt: daysAgo(2) }).expect(200);
  const expired = await shortApi.get('/internal/attribution', { visitorId: 'visitor-0002' });
  expect(expired.status).toBe(404);
  expect(expired.body.error).toMatch(/attribution window of 1 days/);
});

test('a click older than the attribution window is refused by clickId with a 400 naming the window', async () => {
  const { api, clicks } = await visitorWithThreeClicks({ attributionWindowDays: 15 });
  const refused = await api.get('/internal/attribution', { clickId: String(clicks.early.clickId) });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toBe(`click ${clicks.early.clickId} is older than the program's attribution window of 15 days`);
  expect(await attribution(api, { clickId: String(clicks.middle.clickId) })).toMatchObject({
    reason: { method: 'CLICK', clickId: clicks.middle.clickId },
  });
});

test('a program event from before the tracking settings is applied, with their defaults', async () => {
  const { programId, api, clicks } = await visitorWithThreeClicks({ attributionWindowDays: 15 });
  expect((await api.get('/internal/attribution', { clickId: String(clicks.early.clickId) })).status).toBe(400);
  const now = new Date().toISOString();
  const olderShape = {
    id: programId,
    name: 'Test program',
    urlModifier: 'older',
    destinationUrls: [{ url: 'https://shop.example.com/', params: {} }],
    requireApproval: false,
    defaultCommissionRate: 20,
    apiAccess: true,
    rateLimit: null,
    createdAt: now,
    updatedAt: now,
  };
  await harness.publish(createEvent('program.updated', programId, olderShape));
  // Applied: the new URL modifier shows, and the window is back to the default (none).
  await eventually(async () => expect((await api.get('/links', { link: 'early' })).body[0].fullURLs[0].fullUrl).toContain('older='));
  expect(await attribution(api, { clickId: String(clicks.early.clickId) })).toMatchObject({
    clickId: clicks.early.clickId,
    reason: { method: 'CLICK' },
  });
});
