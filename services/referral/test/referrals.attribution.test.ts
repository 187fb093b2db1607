import { Click, Referral, type Affiliate, type Program } from '@affiliate/contracts';
import { eventually, internalHeaders, newProgramId, programUpdatedEvent } from '@affiliate/platform/testing';
import request from 'supertest';
import { createAffiliate, referralEmail, startReferralWorld, type ReferralWorld } from './harness';

let world: ReferralWorld;
beforeAll(async () => {
  world = await startReferralWorld();
});
afterAll(() => world.stop());

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
const postReferral = (programId: string, body: object) =>
  request(world.referral.server).post('/referrals').set(internalHeaders(programId)).send(body);
const referralsByEmail = async (programId: string, email: string) =>
  (await request(world.referral.server).get('/referrals').query({ email }).set(internalHeaders(programId))).body as unknown[];

async function click(programId: string, body: object): Promise<ReturnType<typeof Click.parse>> {
  const response = await request(world.affiliate.server).post('/clicks').set(internalHeaders(programId)).send(body);
  expect(response.status).toBe(200);
  return Click.parse(response.body);
}

/** Announces the program's tracking settings as the gateway does, and waits until the affiliate service shows them applied. */
async function setTracking(programId: string, affiliate: Affiliate, settings: Partial<Program>): Promise<void> {
  const urlModifier = `m${Date.now()}`;
  await world.affiliate.context.bus.publish(
    programUpdatedEvent(programId, { urlModifier, destinationUrls: [{ url: 'https://shop.example.com/', params: {} }], ...settings }),
  );
  await eventually(async () => {
    const links = await request(world.affiliate.server).get('/links').query({ affiliateId: affiliate.id }).set(internalHeaders(programId));
    expect(links.body[0].fullURLs[0].fullUrl).toContain(`${urlModifier}=`);
  });
}

test('a referral by visitorId goes to the click the attribution model picks, and says so (method VISITOR)', async () => {
  const programId = newProgramId();
  const first = await createAffiliate(world, programId);
  const last = await createAffiliate(world, programId);
  await setTracking(programId, first, { attributionModel: 'LAST_CLICK' });
  await click(programId, { link: first.affiliateLinks[0]!.link, visitorId: 'visitor-0001', occurredAt: daysAgo(3) });
  const lastClick = await click(programId, { link: last.affiliateLinks[0]!.link, visitorId: 'visitor-0001', occurredAt: daysAgo(1) });
  const response = await postReferral(programId, { visitorId: 'visitor-0001', email: referralEmail() }).expect(200);
  const referral = Referral.parse(response.body);
  expect(referral).toMatchObject({ affiliateId: last.id, linkId: last.affiliateLinks[0]!.id, clickId: lastClick.clickId });
  expect(referral.attribution).toMatchObject({ method: 'VISITOR', clickId: lastClick.clickId, affiliateId: last.id });
  expect(Date.parse(referral.attribution?.clickedAt ?? '')).toBeLessThan(Date.now() - 86_000_000);
  // The event carries the explanation too.
  await eventually(() =>
    expect(world.events.find((event) => event.type === 'referral.created' && event.data.id === referral.id)?.data).toMatchObject({
      attribution: referral.attribution,
    }),
  );
});

test('a referral by a visitor without a click in the program is refused with a 400 naming visitorId, and nothing is created', async () => {
  const programId = newProgramId();
  await createAffiliate(world, programId);
  const email = referralEmail();
  const response = await postReferral(programId, { visitorId: 'visitor-unknown', email });
  expect(response.status).toBe(400);
  expect(response.body.error).toMatch(/^visitorId: .*visitor-unknown/);
  expect(await referralsByEmail(programId, email)).toEqual([]);
});

test('a referral by a click older than the attribution window is refused with a 400 naming the window, and nothing is created', async () => {
  const programId = newProgramId();
  const affiliate = await createAffiliate(world, programId);
  await setTracking(programId, affiliate, { attributionWindowDays: 30 });
  const old = await click(programId, { link: affiliate.affiliateLinks[0]!.link, occurredAt: daysAgo(31) });
  const email = referralEmail();
  const response = await postReferral(programId, { clickId: old.clickId, email });
  expect(response.status).toBe(400);
  expect(response.body.error).toBe(`clickId: click ${old.clickId} is older than the program's attribution window of 30 days`);
  expect(await referralsByEmail(programId, email)).toEqual([]);
});

test('every referral says how it was attributed: CLICK, LINK or AFFILIATE', async () => {
  const programId = newProgramId();
  const affiliate = await createAffiliate(world, programId);
  const link = affiliate.affiliateLinks[0]!;
  const byClickId = await click(programId, { link: link.link });
  const attributionOf = async (body: object) =>
    Referral.parse((await postReferral(programId, { ...body, email: referralEmail() }).expect(200)).body).attribution;
  const clicked = await attributionOf({ clickId: byClickId.clickId });
  expect(clicked).toMatchObject({ method: 'CLICK', clickId: byClickId.clickId, affiliateId: affiliate.id });
  expect(clicked?.ageSeconds).toBeGreaterThanOrEqual(0);
  const withoutClick = { clickId: null, clickedAt: null, ageSeconds: null, affiliateId: affiliate.id };
  expect(await attributionOf({ link: link.link })).toEqual({ method: 'LINK', ...withoutClick });
  expect(await attributionOf({ affiliateId: affiliate.id })).toEqual({ method: 'AFFILIATE', ...withoutClick });
  expect(await attributionOf({ affiliateEmail: affiliate.email })).toEqual({ method: 'AFFILIATE', ...withoutClick });
});
