import { hostileBodies, newProgramId } from '@affiliate/platform/testing';
import type request from 'supertest';
import { affiliateWithCode, startSaleWorld, timesRedeemed, type SaleWorld } from './sale-world';

let world: SaleWorld;
beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const VALID_ID = '00000000-0000-4000-8000-000000000000';
const sales = () => world.api(world.sale, programId);
function expectClientError(response: request.Response, what: string) {
  if (response.status < 400 || response.status >= 500)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
  expect(typeof response.body.error).toBe('string');
}

test('hostile bodies on POST /sales are 4xx with a message, never 500', async () => {
  const { code } = await affiliateWithCode(world, programId);
  const bases = [
    {
      promoCode: code.code,
      totalEarned: 10,
      currency: 'USD',
      externalId: 'pi_x',
      paymentTrigger: 'api',
      customerId: 'c',
      firstTimeOrder: true,
      productIds: ['p'],
    },
    { referralId: VALID_ID, email: 'a@example.com', totalEarned: 10 },
  ];
  for (const base of bases) {
    for (const body of hostileBodies(base)) {
      const response = await sales().post('/sales', body);
      if (response.status === 200) continue; // some values are legal (totalEarned: 42; a repeat of externalId pi_x)
      expectClientError(response, `POST ${JSON.stringify(body).slice(0, 120)}`);
    }
  }
  // Whatever was accepted is one payment (externalId pi_x), counted once.
  expect(await timesRedeemed(world, programId, code)).toEqual({ code: 1, coupon: 1 });
});

test('hostile bodies on PUT /sales are 4xx, never 500', async () => {
  for (const body of hostileBodies({ saleId: VALID_ID, totalEarned: 1, commissionRate: 10, payoutId: 'po', payoutCreated: true })) {
    expectClientError(await sales().put('/sales', body), `PUT ${JSON.stringify(body).slice(0, 120)}`);
  }
});

test('hostile bodies on DELETE /sales are 4xx, never 500', async () => {
  for (const body of hostileBodies({ saleId: VALID_ID })) {
    expectClientError(await sales().delete('/sales', body), `DELETE ${JSON.stringify(body).slice(0, 120)}`);
  }
});

test('hostile queries on GET /sales are 4xx, never 500', async () => {
  const queries = [
    'id[$ne]=x',
    'affiliateId[$gt]=',
    'referralId=a&referralId=b',
    'limit=0',
    'limit=-1',
    'limit=1.5',
    'limit=1001',
    'limit=abc',
    'startingAfter=nope',
    `id=${'x'.repeat(5000)}`,
    'unknown=1',
  ];
  for (const query of queries) {
    expectClientError(await world.api(world.sale, programId).get(`/sales?${query}`), `GET ?${query.slice(0, 80)}`);
  }
});

test('missing attribution, negative amounts and unknown payment triggers are 400s naming the field', async () => {
  expect((await sales().post('/sales', { totalEarned: 10 }).expect(400)).body.error).toBe(
    'promoCode: one of promoCode, referralId or email is required',
  );
  expect((await sales().post('/sales', { promoCode: 'X', totalEarned: -1 }).expect(400)).body.error).toMatch(/^totalEarned: /);
  expect((await sales().post('/sales', { promoCode: 'X' }).expect(400)).body.error).toBe('totalEarned is required');
  expect((await sales().post('/sales', { promoCode: 'X', totalEarned: 1, paymentTrigger: 'barter' }).expect(400)).body.error).toMatch(
    /^paymentTrigger: /,
  );
  expect((await sales().post('/sales', { email: 'not-an-email', totalEarned: 1 }).expect(400)).body.error).toMatch(/^email: /);
  const malformed = await world.api(world.sale, programId).post('/sales').set('content-type', 'application/json').send('{"promoCode": ');
  expect(malformed.status).toBe(400);
});

test('every problem at once: the cross-field rules are reported beside an invalid field, after it (the error message stays the first problem)', async () => {
  const response = await sales().post('/sales', { totalEarned: 'x' }).expect(400);
  expect(response.body.error).toMatch(/^totalEarned: /);
  expect(response.body.errors).toEqual([
    { param: 'totalEarned', message: response.body.error },
    { param: 'promoCode', message: 'promoCode: one of promoCode, referralId or email is required' },
  ]);
  // Two rules broken beside a bad field: both listed.
  const both = await sales().post('/sales', { promoCode: 'X', referralId: VALID_ID, clickId: 7, totalEarned: -1 }).expect(400);
  expect(both.body.errors.map((problem: { param: string }) => problem.param)).toEqual(['totalEarned', 'promoCode', 'promoCode', 'clickId']);
  // A field sent but invalid counts as sent: no "one of … is required" for it, and nothing more said about it.
  const sent = await sales().post('/sales', { referralId: 'not-a-uuid', totalEarned: 'x' }).expect(400);
  expect(sent.body.errors.map((problem: { param: string }) => problem.param)).toEqual(['referralId', 'totalEarned']);
});
