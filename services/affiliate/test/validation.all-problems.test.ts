import { LINK_MESSAGES } from '@affiliate/contracts';
import { internalHeaders } from '@affiliate/platform/testing';
import request from 'supertest';
import { newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(() => harness.stop());

test('a JSON body sent as text/plain is a 415 naming application/json, and nothing is created', async () => {
  const programId = newProgramId();
  const body = JSON.stringify({ firstName: 'Jane', lastName: 'Doe', email: 'jane@example.com' });
  const response = await request(harness.service.url)
    .post('/affiliates')
    .set(internalHeaders(programId))
    .set('content-type', 'text/plain')
    .send(body);
  expect(response.status).toBe(415);
  expect(response.body.error).toBe('Content-Type must be application/json; the body was sent as text/plain');
  expect((await harness.api(programId).get('/affiliates').expect(200)).body).toEqual([]);
});

test('a 400 keeps the first problem in error and lists every problem in errors', async () => {
  const response = await harness.api(newProgramId()).post('/affiliates', { email: 'not-an-email', nickname: 'x' }).expect(400);
  expect(response.body.error).toBe('firstName is required');
  expect(response.body.errors).toEqual([
    { param: 'firstName', message: 'firstName is required' },
    { param: 'lastName', message: 'lastName is required' },
    { param: 'email', message: expect.stringMatching(/^email: /) },
    { param: 'nickname', message: 'Unknown field in body: nickname' },
  ]);
});

test("the specification's exact slug message comes first, with the other problems after it", async () => {
  const response = await harness
    .api(newProgramId())
    .post('/affiliates', { lastName: 'Doe', email: 'jane@example.com', affiliateLink: 'not a slug!' })
    .expect(400);
  expect(response.body.error).toBe(LINK_MESSAGES.invalidCharacters);
  expect(response.body.errors).toEqual([
    { param: 'affiliateLink', message: LINK_MESSAGES.invalidCharacters },
    { param: 'firstName', message: 'firstName is required' },
  ]);
});
