import { hostileBodies, internalHeaders, newProgramId } from '@affiliate/platform/testing';
import request from 'supertest';
import { createAffiliate, referralEmail, startReferralWorld, type ReferralWorld } from './harness';

let world: ReferralWorld;
beforeAll(async () => {
  world = await startReferralWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const VALID_ID = '00000000-0000-4000-8000-000000000000';
function expectClientError(response: request.Response, what: string) {
  if (response.status < 400 || response.status >= 500)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
  expect(response.body.error ?? response.body.message).toBeTruthy();
}

test('hostile bodies on POST /referrals are 4xx with a message, never 500', async () => {
  const affiliate = await createAffiliate(world, programId);
  const base = {
    affiliateId: affiliate.id,
    email: referralEmail(),
    name: 'n',
    plan: 'p',
    referredUserExternalId: 'e',
    status: 'active',
    clickId: 1,
    link: 'slug',
  };
  for (const body of hostileBodies(base)) {
    const response = await request(world.referral.server).post('/referrals').set(internalHeaders(programId)).send(body);
    if (response.status === 200) continue; // some values (e.g. clickId: 42) are legal
    expectClientError(response, `POST ${JSON.stringify(body).slice(0, 120)}`);
  }
});

test('hostile bodies on PUT /referrals are 4xx in the numbered shape, never 500', async () => {
  const base = { referralId: VALID_ID, name: 'n', email: referralEmail(), plan: 'p', referredUserExternalId: 'e', status: 'active' };
  for (const body of hostileBodies(base)) {
    const response = await request(world.referral.server).put('/referrals').set(internalHeaders(programId)).send(body);
    expectClientError(response, `PUT ${JSON.stringify(body).slice(0, 120)}`);
    expect(typeof response.body.error).toBe('number');
    expect(typeof response.body.message).toBe('string');
  }
});

test('hostile bodies on DELETE /referrals are 4xx, never 500', async () => {
  for (const body of hostileBodies({ referralId: VALID_ID })) {
    const response = await request(world.referral.server).delete('/referrals').set(internalHeaders(programId)).send(body);
    expectClientError(response, `DELETE ${JSON.stringify(body).slice(0, 120)}`);
  }
});

test('hostile queries on GET /referrals are 4xx or an empty answer, never 500', async () => {
  const queries = [
    'id[$ne]=x',
    'email[$gt]=',
    'affiliateId=a&affiliateId=b',
    'limit=0',
    'limit=-1',
    'limit=1.5',
    'limit=1001',
    'limit=abc',
    'startingAfter=nope',
    `id=${'x'.repeat(5000)}`,
    'unknown=1',
    'referredUserExternalId[$regex]=.*',
  ];
  for (const query of queries) {
    const response = await request(world.referral.server).get(`/referrals?${query}`).set(internalHeaders(programId));
    expectClientError(response, `GET ?${query.slice(0, 80)}`);
  }
});

test('a body that is not a JSON object is a 400', async () => {
  for (const raw of ['[]', '"text"', '42', 'null']) {
    const response = await request(world.referral.server)
      .post('/referrals')
      .set(internalHeaders(programId))
      .set('content-type', 'application/json')
      .send(raw);
    expect(response.status).toBe(400);
  }
  const malformed = await request(world.referral.server)
    .post('/referrals')
    .set(internalHeaders(programId))
    .set('content-type', 'application/json')
    .send('{"email": ');
  expect(malformed.status).toBe(400);
});
