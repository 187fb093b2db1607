import { Click, Sale, type Affiliate, type Program } from '@affiliate/contracts';
import { eventually, newProgramId, programUpdatedEvent } from '@affiliate/platform/testing';
import { createAffiliate, saleEvent, startSaleWorld, type SaleWorld } from './sale-world';

/**
 * POST /sales by clickId or visitorId (what a checkout reads from the tracking script): the click is
 * resolved by the affiliate service under the program's attribution window and model.
 */
let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
const sales = (programId: string) => world.api(world.sale, programId);

async function click(
  programId: string,
  affiliate: Affiliate,
  fields: { visitorId?: string; occurredAt?: Date } = {},
): Promise<ReturnType<typeof Click.parse>> {
  const body = {
    link: affiliate.affiliateLinks[0]!.link,
    ...(fields.visitorId ? { visitorId: fields.visitorId } : {}),
    ...(fields.occurredAt ? { occurredAt: fields.occurredAt.toISOString() } : {}),
  };
  return Click.parse((await world.api(world.affiliate, programId).post('/clicks', body).expect(200)).body);
}

/** The program's tracking settings, announced as the gateway does, applied once the affiliate service shows them. */
async function setTracking(programId: string, affiliate: Affiliate, settings: Partial<Program>): Promise<void> {
  const urlModifier = `m${Date.now()}`;
  await world.affiliate.context.bus.publish(
    programUpdatedEvent(programId, { urlModifier, destinationUrls: [{ url: 'https://shop.example.com/', params: {} }], ...settings }),
  );
  await eventually(async () => {
    const links = await world.api(world.affiliate, programId).get('/links', { affiliateId: affiliate.id });
    expect(links.body[0].fullURLs[0].fullUrl).toContain(`${urlModifier}=`);
  });
}

test("a sale by clickId goes to the click's affiliate, attributed CLICK with the click, aged from the click to the payment", async () => {
  const programId = newProgramId();
  const affiliate = await createAffiliate(world, programId, { commissionRate: 10 });
  const clickedAt = daysAgo(3);
  const clicked = await click(programId, affiliate, { occurredAt: clickedAt });
  const paidAt = new Date(clickedAt.getTime() + 7_200_000);
  const sale = Sale.parse(
    (await sales(programId).post('/sales', { clickId: clicked.clickId, totalEarned: 80, paidAt: paidAt.toISOString() }).expect(200)).body,
  );
  expect(sale).toMatchObject({ affiliateId: affiliate.id, referralId: null, linkId: affiliate.affiliateLinks[0]!.id, commissionEarned: 8 });
  expect(sale.attribution).toEqual({
    method: 'CLICK',
    clickId: clicked.clickId,
    clickedAt: clickedAt.toISOString(),
    ageSeconds: 7200,
    affiliateId: affiliate.id,
  });
  expect((await saleEvent(world, 'sale.created', sale.id)).data).toMatchObject({
    affiliateId: affiliate.id,
    attribution: sale.attribution,
    referral: null,
  });
});

test('a sale by visitorId goes to the click the attribution model picks, attributed VISITOR', async () => {
  const programId = newProgramId();
  const first = await createAffiliate(world, programId);
  const last = await createAffiliate(world, programId);
  await setTracking(programId, first, { attributionModel: 'LAST_CLICK' });
  await click(programId, first, { visitorId: 'visitor-sale-0001', occurredAt: daysAgo(2) });
  const lastClick = await click(programId, last, { visitorId: 'visitor-sale-0001', occurredAt: daysAgo(1) });
  const sale = Sale.parse((await sales(programId).post('/sales', { visitorId: 'visitor-sale-0001', totalEarned: 10 }).expect(200)).body);
  expect(sale).toMatchObject({ affiliateId: last.id, referralId: null, linkId: last.affiliateLinks[0]!.id });
  expect(sale.attribution).toMatchObject({ method: 'VISITOR', clickId: lastClick.clickId, affiliateId: last.id });
});

test("a sale by a click older than the program's attribution window is refused with a 400 naming the window, and nothing is recorded", async () => {
  const programId = newProgramId();
  const affiliate = await createAffiliate(world, programId);
  await setTracking(programId, affiliate, { attributionWindowDays: 30 });
  const old = await click(programId, affiliate, { occurredAt: daysAgo(31) });
  const response = await sales(programId).post('/sales', { clickId: old.clickId, totalEarned: 10, externalId: 'pay_old_click' });
  expect(response.status).toBe(400);
  expect(response.body.error).toBe(`clickId: click ${old.clickId} is older than the program's attribution window of 30 days`);
  expect((await sales(programId).get('/sales').expect(200)).body).toEqual([]);
});

test('a sale by an unknown click or visitor is refused with a 400 naming the field, and nothing is recorded', async () => {
  const programId = newProgramId();
  await createAffiliate(world, programId);
  const unknownVisitor = await sales(programId).post('/sales', { visitorId: 'visitor-never-seen', totalEarned: 10 });
  expect(unknownVisitor.status).toBe(400);
  expect(unknownVisitor.body.error).toMatch(/^visitorId: .*visitor-never-seen/);
  const unknownClick = await sales(programId).post('/sales', { clickId: 987654321, totalEarned: 10 });
  expect(unknownClick.status).toBe(400);
  expect(unknownClick.body.error).toMatch(/^clickId: .*987654321/);
  expect((await sales(programId).get('/sales').expect(200)).body).toEqual([]);
});

test('a click of another program does not attribute a sale', async () => {
  const programId = newProgramId();
  const other = newProgramId();
  const affiliate = await createAffiliate(world, other);
  const foreign = await click(other, affiliate, { visitorId: 'visitor-other-program' });
  await createAffiliate(world, programId);
  expect((await sales(programId).post('/sales', { clickId: foreign.clickId, totalEarned: 10 })).status).toBe(400);
  expect((await sales(programId).post('/sales', { visitorId: 'visitor-other-program', totalEarned: 10 })).status).toBe(400);
  expect((await sales(programId).get('/sales').expect(200)).body).toEqual([]);
});

test('a sale is attributed one way: clickId or visitorId with promoCode, referralId, email or each other is a 400 naming the field', async () => {
  const programId = newProgramId();
  await createAffiliate(world, programId);
  const refused = async (body: object) =>
    (
      await sales(programId)
        .post('/sales', { totalEarned: 10, ...body })
        .expect(400)
    ).body.error as string;
  expect(await refused({ clickId: 1, promoCode: 'SAVE10' })).toBe(
    'promoCode: clickId and visitorId must not be sent with promoCode: the affiliate comes from the code',
  );
  expect(await refused({ visitorId: 'visitor-0001', email: 'someone@example.com' })).toBe(
    'clickId and visitorId attribute the sale by themselves: send them without referralId or email',
  );
  expect(await refused({ clickId: 1, visitorId: 'visitor-0001' })).toBe('visitorId: send clickId or visitorId, not both');
  expect(await refused({ clickId: -1 })).toMatch(/^clickId: /);
  expect(await refused({ visitorId: 'no spaces' })).toMatch(/^visitorId/);
  expect((await sales(programId).get('/sales').expect(200)).body).toEqual([]);
});
