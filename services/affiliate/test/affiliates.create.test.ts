import { Affiliate, LINK_MESSAGES } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import { eventsOf, newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

const jane = { firstName: 'Jane', lastName: 'Doe', email: 'jane.doe+promo@example.com' };

test('creates an ACTIVE affiliate with a slug generated from the email and the deprecated link null', async () => {
  const response = await harness.api(newProgramId()).post('/affiliates', jane);
  expect(response.status).toBe(200);
  const affiliate = Affiliate.parse(response.body);
  expect(affiliate).toMatchObject({ ...jane, status: 'ACTIVE', commissionRate: 20, link: null });
  expect(affiliate.affiliateLinks.map((link) => link.link)).toEqual(['janedoepromo']);
  expect(affiliate.affiliateLinks[0]?.userId).toBe(affiliate.id);
});

test('requires firstName, lastName and a valid email', async () => {
  const api = harness.api(newProgramId());
  expect((await api.post('/affiliates', { lastName: 'Doe', email: 'a@example.com' })).body).toMatchObject({
    error: 'firstName is required',
  });
  expect((await api.post('/affiliates', { firstName: 'A', email: 'a@example.com' })).body).toMatchObject({ error: 'lastName is required' });
  const badEmail = await api.post('/affiliates', { ...jane, email: 'not-an-email' });
  expect(badEmail.status).toBe(400);
  expect(badEmail.body.error).toMatch(/^email/);
});

test('uses the requested affiliateLink and commissionRate', async () => {
  const response = await harness.api(newProgramId()).post('/affiliates', { ...jane, affiliateLink: 'Jane-Deals', commissionRate: 35 });
  expect(response.status).toBe(200);
  expect(response.body.commissionRate).toBe(35);
  expect(response.body.affiliateLinks.map((link: { link: string }) => link.link)).toEqual(['Jane-Deals']);
});

test('a requested affiliateLink already in use is a 400 with the exact message and no fallback', async () => {
  const api = harness.api(newProgramId());
  await api.post('/affiliates', { ...jane, affiliateLink: 'taken' }).expect(200);
  const response = await api.post('/affiliates', { ...jane, email: 'other@example.com', affiliateLink: 'TAKEN' });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ error: LINK_MESSAGES.inUseOnCreate });
  expect((await api.get('/affiliates', { email: 'other@example.com' })).body).toBeNull();
});

test('a malformed affiliateLink is a 400 with the exact message', async () => {
  const response = await harness.api(newProgramId()).post('/affiliates', { ...jane, affiliateLink: 'no spaces!' });
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ error: LINK_MESSAGES.invalidCharacters });
});

test('a generated slug skips slugs already taken', async () => {
  const api = harness.api(newProgramId());
  await api.post('/affiliates', { ...jane, email: 'other@example.com', affiliateLink: 'sam' }).expect(200);
  const response = await api.post('/affiliates', { ...jane, email: 'Sam@example.com' });
  expect(response.body.affiliateLinks[0].link).toBe('sam-2');
});

test('20 concurrent sign-ups sharing one email local part all succeed with distinct slugs', async () => {
  const api = harness.api(newProgramId());
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, index) => api.post('/affiliates', { ...jane, email: `crowd@domain${index}.example.com` })),
  );
  expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
  const slugs = responses.map((response) => response.body.affiliateLinks[0].link as string);
  expect(new Set(slugs).size).toBe(20);
  for (const slug of slugs) expect(slug).toMatch(/^crowd(-[a-z0-9]+)?$/);
});

test('new affiliates are PENDING when the program requires approval, with its default commission rate', async () => {
  const programId = newProgramId();
  await harness.setProgram(programId, { requireApproval: true, defaultCommissionRate: 12.5 });
  await eventually(async () => {
    const response = await harness
      .api(programId)
      .post('/affiliates', { ...jane, email: `${Math.random().toString(36).slice(2)}@example.com` });
    expect(response.body).toMatchObject({ status: 'PENDING', commissionRate: 12.5 });
  });
});

test('the email is unique per program, whatever its case, and free in another program', async () => {
  const programId = newProgramId();
  await harness.api(programId).post('/affiliates', jane).expect(200);
  const duplicate = await harness.api(programId).post('/affiliates', { ...jane, email: jane.email.toUpperCase() });
  expect(duplicate.status).toBe(400);
  expect(duplicate.body.error).toMatch(/already exists/);
  await harness.api(newProgramId()).post('/affiliates', jane).expect(200);

  const racing = harness.api(newProgramId());
  const responses = await Promise.all(Array.from({ length: 5 }, () => racing.post('/affiliates', jane)));
  expect(responses.map((response) => response.status).sort()).toEqual([200, 400, 400, 400, 400]);
  expect((await racing.get('/links')).body).toHaveLength(1);
});

test('emits affiliate.created with links, promotional codes and commission fields', async () => {
  const response = await harness.api(newProgramId()).post('/affiliates', jane);
  const [created] = await eventually(() => {
    const events = eventsOf(harness, 'affiliate.created', response.body.id);
    expect(events).toHaveLength(1);
    return events;
  });
  const payload = Affiliate.parse(created?.data);
  expect(payload).toMatchObject({
    commissionPlan: null,
    commissionTier: null,
    promotionalCodes: [],
    signupAnswers: [],
    commissionRate: 20,
  });
  expect(payload.affiliateLinks).toEqual(response.body.affiliateLinks);
});
