import { randomUUID } from 'node:crypto';
import { Click, exampleEventData, LinkResponse } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { eventually } from '@affiliate/platform/testing';
import { createAffiliate, newProgramId, startAffiliateService, type Api, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

const linkNamed = async (api: Api, link: string) => LinkResponse.parse((await api.get('/links', { link })).body[0]);

/** An event published twice with its id, and once more as a new event with the same data: all three must count once. */
async function deliverRepeatedly(programId: string, type: Parameters<typeof createEvent>[0], replaced: Record<string, unknown>) {
  const data = exampleEventData(type, replaced as never);
  const event = createEvent(type, programId, data);
  await harness.publish(event);
  await harness.publish(event);
  await harness.publish(createEvent(type, programId, data));
}

test('POST /clicks returns numeric click ids unique in the program, even when clicks arrive together, and counts them on the link', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const responses = await Promise.all(
    Array.from({ length: 25 }, () => api.post('/clicks', { link: 'ANN', landingUrl: 'https://shop.example.com/?q=1' })),
  );
  const clicks = responses.map((response) => Click.parse(response.body));
  expect(new Set(clicks.map((click) => click.clickId)).size).toBe(25);
  expect(clicks.every((click) => click.affiliateId === affiliate.id && click.link === 'ann')).toBe(true);
  expect((await linkNamed(api, 'ann')).clicks).toBe(25);
  const otherProgram = harness.api(newProgramId());
  await createAffiliate(otherProgram, 'ann@example.com', 'ann');
  expect(Click.parse((await otherProgram.post('/clicks', { link: 'ann' })).body).clickId).toBe(1);
  const unknown = await api.post('/clicks', { link: 'nobody' });
  expect(unknown.status).toBe(400);
  expect(unknown.body.error).toMatch(/^link/);
});

test('referral and sale events published before attribution existed are still counted (a rolling upgrade loses nothing)', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'old@example.com', 'oldshape');
  const link = affiliate.affiliateLinks[0];
  const referralId = randomUUID();
  const { attribution: _referralAttribution, ...olderReferral } = exampleEventData('referral.created', {
    id: referralId,
    affiliateId: affiliate.id,
    linkId: link?.id,
  });
  const { attribution: _saleAttribution, ...olderSale } = exampleEventData('sale.created', {
    id: randomUUID(),
    affiliateId: affiliate.id,
    linkId: link?.id,
    referralId,
    totalEarned: 42,
    currency: 'USD',
  });
  await harness.publish(createEvent('referral.created', programId, olderReferral as never));
  await harness.publish(createEvent('sale.created', programId, olderSale as never));
  await eventually(async () => expect(await linkNamed(api, 'oldshape')).toMatchObject({ referrals: 1, sales: 1 }));
});

test('200 concurrent clicks on one program get 200 distinct click ids, numbered 1 to 200', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  await createAffiliate(api, 'bea@example.com', 'bea');
  const responses = await Promise.all(Array.from({ length: 200 }, () => api.post('/clicks', { link: 'bea' })));
  expect(responses.map((response) => response.status)).toEqual(Array(200).fill(200));
  const clickIds = responses.map((response) => Click.parse(response.body).clickId ?? 0).sort((a, b) => a - b);
  expect(clickIds).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
  expect((await linkNamed(api, 'bea')).clicks).toBe(200);
});

test('after 100 clicks, 10 referrals and 5 sales (one deleted), each event delivered repeatedly, GET /links shows 100 / 10 / 4 and the revenue', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const link = affiliate.affiliateLinks[0];
  for (let index = 0; index < 100; index += 1) await api.post('/clicks', { link: 'ann' }).expect(200);

  const referralIds = Array.from({ length: 10 }, () => randomUUID());
  for (const id of referralIds)
    await deliverRepeatedly(programId, 'referral.created', { id, affiliateId: affiliate.id, linkId: link?.id, email: 'c@example.com' });

  const amounts = [10.1, 20.2, 30.3, 40.4, 99.99];
  const saleIds = amounts.map(() => randomUUID());
  const updatedAt = new Date().toISOString();
  for (const [index, id] of saleIds.entries()) {
    await deliverRepeatedly(programId, 'sale.created', {
      id,
      affiliateId: affiliate.id,
      linkId: link?.id,
      referralId: referralIds[index],
      totalEarned: amounts[index],
      currency: 'USD',
      updatedAt,
    });
  }
  await deliverRepeatedly(programId, 'sale.deleted', { id: saleIds[4] });

  await eventually(async () =>
    expect(await linkNamed(api, 'ann')).toMatchObject({ clicks: 100, referrals: 10, sales: 4, totalRevenue: 101 }),
  );
  // A late copy of the deleted sale's creation must not bring it back.
  await harness.publish(
    createEvent(
      'sale.created',
      programId,
      exampleEventData('sale.created', {
        id: saleIds[4],
        affiliateId: affiliate.id,
        linkId: link?.id,
        totalEarned: 99.99,
        updatedAt,
      } as never),
    ),
  );
  await deliverRepeatedly(programId, 'referral.created', { id: randomUUID(), affiliateId: affiliate.id, linkId: link?.id });
  await eventually(async () => expect(await linkNamed(api, 'ann')).toMatchObject({ referrals: 11, sales: 4, totalRevenue: 101 }));
});

test("sale.updated replaces the amount, an older update is ignored, and referrals and sales without a link count on the affiliate's first link", async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'ann@example.com', 'first');
  await api.post('/links', { link: 'second', affiliateId: affiliate.id }).expect(200);
  const saleId = randomUUID();
  const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
  await deliverRepeatedly(programId, 'sale.created', {
    id: saleId,
    affiliateId: affiliate.id,
    linkId: null,
    totalEarned: 50,
    updatedAt: at(0),
  });
  await deliverRepeatedly(programId, 'referral.created', { id: randomUUID(), affiliateId: affiliate.id, linkId: null });
  await deliverRepeatedly(programId, 'sale.updated', {
    id: saleId,
    affiliateId: affiliate.id,
    linkId: null,
    totalEarned: 75.5,
    updatedAt: at(2000),
  });
  await eventually(async () => expect(await linkNamed(api, 'first')).toMatchObject({ referrals: 1, sales: 1, totalRevenue: 75.5 }));
  await harness.publish(
    createEvent(
      'sale.updated',
      programId,
      exampleEventData('sale.updated', {
        id: saleId,
        affiliateId: affiliate.id,
        linkId: null,
        totalEarned: 60,
        updatedAt: at(1000),
      } as never),
    ),
  );
  await deliverRepeatedly(programId, 'referral.deleted', { id: randomUUID() });
  await deliverRepeatedly(programId, 'sale.created', {
    id: randomUUID(),
    affiliateId: affiliate.id,
    linkId: null,
    totalEarned: 0.01,
    updatedAt: at(0),
  });
  await eventually(async () => expect(await linkNamed(api, 'first')).toMatchObject({ referrals: 1, sales: 2, totalRevenue: 75.51 }));
  expect(await linkNamed(api, 'second')).toMatchObject({ clicks: 0, referrals: 0, sales: 0, totalRevenue: 0 });
});

test("events of another program never touch this program's statistics", async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = await createAffiliate(api, 'ann@example.com', 'ann');
  const otherProgram = newProgramId();
  await deliverRepeatedly(otherProgram, 'referral.created', {
    id: randomUUID(),
    affiliateId: affiliate.id,
    linkId: affiliate.affiliateLinks[0]?.id,
  });
  await deliverRepeatedly(programId, 'referral.created', {
    id: randomUUID(),
    affiliateId: affiliate.id,
    linkId: affiliate.affiliateLinks[0]?.id,
  });
  await eventually(async () => expect((await linkNamed(api, 'ann')).referrals).toBe(1));
});
