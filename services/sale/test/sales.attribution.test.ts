import { ExpandedSale, Referral, Sale } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { z } from 'zod';
import {
  affiliateWithCode,
  createAffiliate,
  createReferral,
  saleEvent,
  setAffiliateStatus,
  startSaleWorld,
  timesRedeemed,
  type SaleWorld,
} from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const sales = (program = programId) => world.api(world.sale, program);

test("a sale by promo code is credited to the code's affiliate and counted once on code and coupon", async () => {
  const { affiliate, coupon, code } = await affiliateWithCode(world, programId, { commissionRate: 20 });
  const response = await sales()
    .post('/sales', { promoCode: code.code.toLowerCase(), totalEarned: 100, currency: 'eur', customerId: 'cus_1' })
    .expect(200);
  const sale = Sale.strict().parse(response.body);
  expect(sale).toMatchObject({
    affiliateId: affiliate.id,
    promotionalCodeId: code.id,
    couponId: coupon.id,
    promoCode: code.code,
    referralId: null,
    linkId: null,
    customerId: 'cus_1',
    totalEarned: 100,
    currency: 'EUR',
    commissionRate: 20,
    commissionEarned: 20,
    paymentTrigger: 'api',
    programId,
  });
  expect(sale.commissions).toEqual([
    {
      id: expect.any(String),
      affiliateId: affiliate.id,
      amount: 20,
      currency: 'EUR',
      status: 'PENDING',
      availableAt: expect.any(String),
      commissionPlanId: null,
      adjusts: null,
      payoutCreated: false,
      payoutId: null,
    },
  ]);
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 1, coupon: 1 });
});

test("a sale by referralId goes to the referral's affiliate and keeps the referral's link", async () => {
  const affiliate = await createAffiliate(world, programId, { commissionRate: 10 });
  const link = affiliate.affiliateLinks[0]!;
  const referral = await createReferral(world, programId, { link: link.link });
  const response = await sales()
    .post('/sales', { referralId: referral.id, totalEarned: 50, paymentTrigger: 'subscription_created' })
    .expect(200);
  expect(Sale.parse(response.body)).toMatchObject({
    affiliateId: affiliate.id,
    referralId: referral.id,
    linkId: link.id,
    promoCode: null,
    promotionalCodeId: null,
    commissionEarned: 5,
    paymentTrigger: 'subscription_created',
  });
});

test('a sale by email goes through the referral with that email', async () => {
  const affiliate = await createAffiliate(world, programId);
  const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
  const response = await sales().post('/sales', { email: referral.email.toUpperCase(), totalEarned: 10 }).expect(200);
  expect(Sale.parse(response.body)).toMatchObject({ affiliateId: affiliate.id, referralId: referral.id, linkId: null });
});

test('a referralId or email that does not resolve is a 400 naming it', async () => {
  const byId = await sales().post('/sales', { referralId: '00000000-0000-4000-8000-000000000000', totalEarned: 10 }).expect(400);
  expect(byId.body.error).toMatch(/^referralId: no referral with id/);
  const byEmail = await sales().post('/sales', { email: 'nobody@example.com', totalEarned: 10 }).expect(400);
  expect(byEmail.body.error).toBe('email: no referral with email nobody@example.com in this program');
});

test('referralId and email of two different referrals are a 400', async () => {
  const affiliate = await createAffiliate(world, programId);
  const first = await createReferral(world, programId, { affiliateId: affiliate.id });
  const second = await createReferral(world, programId, { affiliateId: affiliate.id });
  const response = await sales().post('/sales', { referralId: first.id, email: second.email, totalEarned: 10 }).expect(400);
  expect(response.body.error).toMatch(/^email: /);
});

test('the commission is totalEarned × commissionRate / 100, rounded half away from zero to the cent', async () => {
  // [totalEarned sent, commissionRate, totalEarned stored, commission]
  const cases: [number, number, number, number][] = [
    [19.99, 33.3, 19.99, 6.66], // 6.65667
    [10.05, 50, 10.05, 5.03], // 5.025: a float product would give 5.02
    [0.01, 50, 0.01, 0.01], // half a cent rounds up
    [1.005, 100, 1.01, 1.01], // 1.005 is really 1.00499999…; it is read as the cents its author meant
    [123.45, 0, 123.45, 0],
  ];
  for (const [totalEarned, commissionRate, storedTotal, commission] of cases) {
    const affiliate = await createAffiliate(world, programId, { commissionRate });
    const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
    const sale = Sale.parse((await sales().post('/sales', { referralId: referral.id, totalEarned }).expect(200)).body);
    expect([sale.totalEarned, sale.commissionRate, sale.commissionEarned, sale.commissions[0]!.amount]).toEqual([
      storedTotal,
      commissionRate,
      commission,
      commission,
    ]);
  }
});

test('sale.created expands the affiliate, the referral, commissionEarned and paymentTrigger', async () => {
  const affiliate = await createAffiliate(world, programId, { commissionRate: 25 });
  const referral = await createReferral(world, programId, { affiliateId: affiliate.id, name: 'Grace' });
  const sale = Sale.parse(
    (await sales().post('/sales', { referralId: referral.id, totalEarned: 40, paymentTrigger: 'invoice_paid' }).expect(200)).body,
  );
  const event = await saleEvent(world, 'sale.created', sale.id);
  const data = ExpandedSale.parse(event.data);
  expect(data).toMatchObject({ ...sale, commissionEarned: 10, paymentTrigger: 'invoice_paid' });
  expect(data.affiliate).toMatchObject({
    id: affiliate.id,
    firstName: affiliate.firstName,
    lastName: affiliate.lastName,
    email: affiliate.email,
    status: 'ACTIVE',
    commissionRate: 25,
  });
  expect(Referral.parse(data.referral)).toEqual(referral);
});

test('sale.created of a promo-code sale has the affiliate expanded and no referral', async () => {
  const { affiliate, code } = await affiliateWithCode(world, programId);
  const sale = Sale.parse((await sales().post('/sales', { promoCode: code.code, totalEarned: 12 }).expect(200)).body);
  const data = ExpandedSale.parse((await saleEvent(world, 'sale.created', sale.id)).data);
  expect(data.affiliate.id).toBe(affiliate.id);
  expect(data.referral).toBeNull();
});

test('an affiliate that is not ACTIVE earns no sale through a referral', async () => {
  const affiliate = await createAffiliate(world, programId);
  const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
  await setAffiliateStatus(world, programId, affiliate.id, 'DISABLED');
  const response = await sales().post('/sales', { referralId: referral.id, totalEarned: 10 }).expect(400);
  expect(response.body.error).toBe(`Affiliate ${affiliate.id} is DISABLED: only ACTIVE affiliates can earn a sale`);
  expect((await sales().get('/sales', { referralId: referral.id }).expect(200)).body).toEqual([]);
});

test('GET /sales by id is one sale (404 when unknown); by affiliateId or referralId an array; with nothing, newest first', async () => {
  const program = newProgramId();
  const affiliate = await createAffiliate(world, program);
  const referral = await createReferral(world, program, { affiliateId: affiliate.id });
  const first = Sale.parse((await sales(program).post('/sales', { referralId: referral.id, totalEarned: 1 }).expect(200)).body);
  const second = Sale.parse((await sales(program).post('/sales', { referralId: referral.id, totalEarned: 2 }).expect(200)).body);
  expect(Sale.parse((await sales(program).get('/sales', { id: first.id }).expect(200)).body)).toEqual(first);
  expect((await sales(program).get('/sales', { id: '00000000-0000-4000-8000-000000000000' }).expect(404)).body.error).toMatch(
    /No sale with id/,
  );
  expect(z.array(Sale).parse((await sales(program).get('/sales', { affiliateId: affiliate.id }).expect(200)).body)).toEqual([
    second,
    first,
  ]);
  expect(z.array(Sale).parse((await sales(program).get('/sales', { referralId: referral.id }).expect(200)).body)).toEqual([second, first]);
  const page = await sales(program).get('/sales', { limit: '1' }).expect(200);
  expect(page.body).toEqual([second]);
  expect(page.headers.link).toBe(`</sales?limit=1&startingAfter=${second.id}>; rel="next"`);
  expect((await sales(program).get('/sales', { limit: '1', startingAfter: second.id }).expect(200)).body).toEqual([first]);
});

test("sales are invisible to other programs, and another program's referral or code cannot attribute one", async () => {
  const owner = newProgramId();
  const stranger = newProgramId();
  const { code } = await affiliateWithCode(world, owner);
  const affiliate = await createAffiliate(world, owner);
  const referral = await createReferral(world, owner, { affiliateId: affiliate.id });
  const sale = Sale.parse((await sales(owner).post('/sales', { referralId: referral.id, totalEarned: 5 }).expect(200)).body);
  await sales(stranger).get('/sales', { id: sale.id }).expect(404);
  expect((await sales(stranger).get('/sales', {}).expect(200)).body).toEqual([]);
  expect((await sales(stranger).get('/sales', { affiliateId: affiliate.id }).expect(200)).body).toEqual([]);
  await sales(stranger).post('/sales', { referralId: referral.id, totalEarned: 5 }).expect(400);
  await sales(stranger).post('/sales', { promoCode: code.code, totalEarned: 5 }).expect(400);
  await sales(stranger).put('/sales', { saleId: sale.id, payoutCreated: true }).expect(404);
  await sales(stranger).delete('/sales', { saleId: sale.id }).expect(404);
  expect(await timesRedeemed(world, owner, code)).toEqual({ code: 0, coupon: 0 });
});
