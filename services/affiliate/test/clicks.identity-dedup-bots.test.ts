import { Click, LinkResponse } from '@affiliate/contracts';
import { bootService } from '@affiliate/platform';
import { serviceApi, testServiceSettings } from '@affiliate/platform/testing';
import { buildAffiliateService } from '../src/service';
import { applyProgramSettings, createAffiliate, newProgramId, startAffiliateService, type Api, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

const clicksOn = async (api: Api, link: string) => LinkResponse.parse((await api.get('/links', { link })).body[0]).clicks;
const click = async (api: Api, body: Record<string, unknown>) => {
  const response = await api.post('/clicks', body);
  expect(response.status).toBe(200);
  return Click.parse(response.body);
};

/** A fresh program with one affiliate whose link is `slug`. */
async function programWithLink(slug: string): Promise<{ programId: string; api: Api }> {
  const programId = newProgramId();
  const api = harness.api(programId);
  await createAffiliate(api, `${slug}@example.com`, slug);
  return { programId, api };
}

test('a repeat click of one visitor on one link within clickDedupSeconds gets the first click id and is not counted', async () => {
  const { api } = await programWithLink('ann');
  await createAffiliate(api, 'bob@example.com', 'bob');
  const first = await click(api, { link: 'ann', visitorId: 'visitor-0001' });
  expect(first).toMatchObject({ counted: true, reason: null });
  expect(await click(api, { link: 'ann', visitorId: 'visitor-0001' })).toMatchObject({
    clickId: first.clickId,
    counted: false,
    reason: 'DUPLICATE',
  });
  // Another visitor, or the same visitor on another link, is a new click.
  expect(await click(api, { link: 'ann', visitorId: 'visitor-0002' })).toMatchObject({ counted: true, reason: null });
  expect(await click(api, { link: 'bob', visitorId: 'visitor-0001' })).toMatchObject({ counted: true, reason: null });
  expect(await clicksOn(api, 'ann')).toBe(2);
  expect(await clicksOn(api, 'bob')).toBe(1);
});

test('without a visitor id, the address and user agent identify the visitor', async () => {
  const { api } = await programWithLink('ann');
  const first = await click(api, { link: 'ann', ipAddress: '203.0.113.7', userAgent: CHROME });
  expect(await click(api, { link: 'ann', ipAddress: '203.0.113.7', userAgent: CHROME })).toMatchObject({
    clickId: first.clickId,
    counted: false,
    reason: 'DUPLICATE',
  });
  expect(await click(api, { link: 'ann', ipAddress: '203.0.113.7', userAgent: FIREFOX })).toMatchObject({ counted: true });
  expect(await click(api, { link: 'ann', ipAddress: '198.51.100.9', userAgent: CHROME })).toMatchObject({ counted: true });
  expect(await clicksOn(api, 'ann')).toBe(3);
});

test('a click after the deduplication window has passed counts again', async () => {
  const { api } = await programWithLink('ann');
  const imported = await click(api, { link: 'ann', visitorId: 'visitor-0001', occurredAt: hoursAgo(2) });
  const again = await click(api, { link: 'ann', visitorId: 'visitor-0001' });
  expect(again).toMatchObject({ counted: true, reason: null });
  expect(again.clickId).not.toBe(imported.clickId);
  expect(await clicksOn(api, 'ann')).toBe(2);
});

test('clickDedupSeconds 0 turns deduplication off', async () => {
  const { programId, api } = await programWithLink('ann');
  await applyProgramSettings(harness, programId, 'ann', { clickDedupSeconds: 0 });
  for (let index = 0; index < 3; index += 1)
    expect(await click(api, { link: 'ann', visitorId: 'visitor-0001' })).toMatchObject({ counted: true });
  expect(await clicksOn(api, 'ann')).toBe(3);
});

test('concurrent identical clicks count exactly once, for a visitor id and for an address, also when an expired claim is taken over', async () => {
  const { api } = await programWithLink('ann');
  const burst = async (body: Record<string, unknown>) => Promise.all(Array.from({ length: 30 }, () => click(api, body)));
  for (const body of [
    { link: 'ann', visitorId: 'visitor-0001' },
    // A fresh program: the first anonymous clicks also race to create the program's secret.
    { link: 'ann', ipAddress: '203.0.113.7', userAgent: CHROME },
  ]) {
    const clicks = await burst(body);
    expect(clicks.filter((each) => each.counted)).toHaveLength(1);
    expect(new Set(clicks.map((each) => each.clickId)).size).toBe(1);
  }
  await click(api, { link: 'ann', visitorId: 'visitor-0002', occurredAt: hoursAgo(2) });
  const afterExpiry = await burst({ link: 'ann', visitorId: 'visitor-0002' });
  expect(afterExpiry.filter((each) => each.counted)).toHaveLength(1);
  expect(await clicksOn(api, 'ann')).toBe(4);
});

test('a bot is answered BOT with no click id, and nothing is stored or counted', async () => {
  const { api } = await programWithLink('ann');
  expect(await click(api, { link: 'ann', userAgent: GOOGLEBOT, ipAddress: '66.249.66.1' })).toEqual({
    clickId: null,
    link: 'ann',
    affiliateId: expect.any(String),
    counted: false,
    reason: 'BOT',
  });
  expect(await clicksOn(api, 'ann')).toBe(0);
  // No click id was spent on it: the first human click is click 1.
  expect(await click(api, { link: 'ann', userAgent: CHROME })).toMatchObject({ clickId: 1, counted: true });
});

test('a click without an identity counts every time, whatever else it carries', async () => {
  const { api } = await programWithLink('ann');
  for (let index = 0; index < 3; index += 1) {
    expect(await click(api, { link: 'ann', userAgent: CHROME, referrer: 'https://blog.example.com/post' })).toMatchObject({
      counted: true,
      reason: null,
    });
  }
  expect(await clicksOn(api, 'ann')).toBe(3);
});

test("the visitor's address is never stored", async () => {
  const { api } = await programWithLink('ann');
  const address = '203.0.113.77';
  await click(api, { link: 'ann', ipAddress: address, userAgent: CHROME });
  expect(await click(api, { link: 'ann', ipAddress: address, userAgent: CHROME })).toMatchObject({ reason: 'DUPLICATE' });
  const database = harness.service.context.connection.db!;
  const stored: unknown[] = [];
  for (const { name } of await database.listCollections().toArray()) stored.push(...(await database.collection(name).find({}).toArray()));
  expect(stored.length).toBeGreaterThan(0);
  expect(JSON.stringify(stored)).not.toContain(address);
});

test('occurredAt must be in the past and at most 90 days ago, else 400 naming it and nothing counted', async () => {
  const { api } = await programWithLink('ann');
  for (const occurredAt of [new Date(Date.now() + 86_400_000).toISOString(), new Date(Date.now() - 91 * 86_400_000).toISOString()]) {
    const response = await api.post('/clicks', { link: 'ann', visitorId: 'visitor-0001', occurredAt });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/^occurredAt/);
  }
  expect(await clicksOn(api, 'ann')).toBe(0);
  expect(
    await click(api, { link: 'ann', visitorId: 'visitor-0001', occurredAt: new Date(Date.now() - 89 * 86_400_000).toISOString() }),
  ).toMatchObject({ counted: true });
});

test('clicks batched together on two replicas sharing a database: each visitor counts once however its repeats interleave, and every click id is unique', async () => {
  const { programId, api } = await programWithLink('ann');
  const { dbName, exchange } = harness.service.context.settings;
  const second = await bootService(testServiceSettings('affiliate', { dbName, exchange }), (context) => buildAffiliateService(context));
  try {
    const replicas = [api, serviceApi(second.url, programId)];
    // 40 visitors, each clicking 4 times at once, alternately on each replica; 60 clicks without an identity among them.
    const visitors = Array.from({ length: 40 }, (_, index) => `visitor-${String(index).padStart(4, '0')}`);
    const identified = visitors.flatMap((visitorId, v) =>
      [0, 1, 2, 3].map(async (n) => ({
        visitorId,
        answer: await click(replicas[(v + n) % 2] as Api, { link: 'ann', visitorId, userAgent: CHROME }),
      })),
    );
    const plain = Array.from({ length: 60 }, (_, index) => click(replicas[index % 2] as Api, { link: 'ann' }));
    const [clicks, plainClicks] = await Promise.all([Promise.all(identified), Promise.all(plain)]);
    for (const visitorId of visitors) {
      const own = clicks.filter((each) => each.visitorId === visitorId).map((each) => each.answer);
      expect({
        visitorId,
        counted: own.filter((answer) => answer.counted).length,
        ids: new Set(own.map((answer) => answer.clickId)).size,
      }).toEqual({ visitorId, counted: 1, ids: 1 });
    }
    const countedIds = [...clicks.map((each) => each.answer).filter((answer) => answer.counted), ...plainClicks].map(
      (answer) => answer.clickId,
    );
    expect(plainClicks.every((answer) => answer.counted)).toBe(true);
    expect(new Set(countedIds).size).toBe(100);
    expect(await clicksOn(api, 'ann')).toBe(100);
  } finally {
    await second.stop();
  }
});
