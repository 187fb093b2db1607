import { Click, Referral } from '@affiliate/contracts';
import { bootService } from '@affiliate/platform';
import { eventually, internalHeaders, newProgramId, testServiceSettings } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildReferralService } from '../src/service';
import { createAffiliate, referralEmail, startReferralWorld, type ReferralWorld } from './harness';

let world: ReferralWorld;
beforeAll(async () => {
  world = await startReferralWorld();
});
afterAll(() => world.stop());

const programId = newProgramId();
const post = (body: object, program = programId) =>
  request(world.referral.server).post('/referrals').set(internalHeaders(program)).send(body);

test('a referral attributed by affiliateId belongs to that affiliate, with no link', async () => {
  const affiliate = await createAffiliate(world, programId);
  const email = referralEmail();
  const response = await post({ affiliateId: affiliate.id, email, name: 'Grace', plan: 'pro', referredUserExternalId: 'user-1' }).expect(
    200,
  );
  const referral = Referral.parse(response.body);
  expect(referral).toMatchObject({
    affiliateId: affiliate.id,
    email,
    name: 'Grace',
    plan: 'pro',
    referredUserExternalId: 'user-1',
    status: 'active',
    linkId: null,
    clickId: null,
    programId,
  });
});

test('a referral attributed by affiliateEmail belongs to that affiliate', async () => {
  const affiliate = await createAffiliate(world, programId);
  const response = await post({ affiliateEmail: affiliate.email, email: referralEmail() }).expect(200);
  expect(Referral.parse(response.body).affiliateId).toBe(affiliate.id);
});

test('a referral attributed by a slug carries that link', async () => {
  const affiliate = await createAffiliate(world, programId);
  const link = affiliate.affiliateLinks[0]!;
  const response = await post({ link: link.link, email: referralEmail() }).expect(200);
  expect(Referral.parse(response.body)).toMatchObject({ affiliateId: affiliate.id, linkId: link.id, clickId: null });
});

test('a referral attributed by a click id carries the click and its link', async () => {
  const affiliate = await createAffiliate(world, programId);
  const link = affiliate.affiliateLinks[0]!;
  const click = Click.parse(
    (await request(world.affiliate.server).post('/clicks').set(internalHeaders(programId)).send({ link: link.link }).expect(200)).body,
  );
  const response = await post({ clickId: click.clickId, email: referralEmail() }).expect(200);
  expect(Referral.parse(response.body)).toMatchObject({ affiliateId: affiliate.id, linkId: link.id, clickId: click.clickId });
});

test('an identifier that does not resolve is a 400 naming it', async () => {
  const unknownAffiliate = await post({ affiliateId: '00000000-0000-4000-8000-000000000000', email: referralEmail() }).expect(400);
  expect(unknownAffiliate.body.error).toMatch(/^affiliateId: /);
  const unknownSlug = await post({ link: 'no-such-slug', email: referralEmail() }).expect(400);
  expect(unknownSlug.body.error).toMatch(/^link: .*no-such-slug/);
  const unknownClick = await post({ clickId: 987654321, email: referralEmail() }).expect(400);
  expect(unknownClick.body.error).toMatch(/^clickId: /);
  const unknownEmail = await post({ affiliateEmail: 'nobody@example.com', email: referralEmail() }).expect(400);
  expect(unknownEmail.body.error).toMatch(/^affiliateEmail: /);
});

test('a referral needs one of clickId, link, affiliateId or affiliateEmail', async () => {
  const response = await post({ email: referralEmail() }).expect(400);
  expect(response.body.error).toBe('clickId: one of clickId, link, affiliateId or affiliateEmail is required');
});

test('there is one referral per email in a program, whatever its case', async () => {
  const affiliate = await createAffiliate(world, programId);
  const email = referralEmail();
  await post({ affiliateId: affiliate.id, email }).expect(200);
  const again = await post({ affiliateId: affiliate.id, email: email.toUpperCase() }).expect(400);
  expect(again.body).toMatchObject({ error: 'A referral with this email already exists' });
});

test('a click or visitor that does not resolve is refused before the email is looked at: the answer never tells whether the email is a referral', async () => {
  const affiliate = await createAffiliate(world, programId);
  const email = referralEmail();
  await post({ affiliateId: affiliate.id, email }).expect(200);
  const bogusClick = await post({ clickId: 987654321, email }).expect(400);
  expect(bogusClick.body.error).toMatch(/^clickId: /);
  const bogusVisitor = await post({ visitorId: 'visitor-never-seen-1', email }).expect(400);
  expect(bogusVisitor.body.error).toMatch(/^visitorId: /);
});

test('simultaneous referrals for one email record exactly one', async () => {
  const affiliate = await createAffiliate(world, programId);
  const email = referralEmail();
  const responses = await Promise.all(Array.from({ length: 10 }, () => post({ affiliateId: affiliate.id, email })));
  expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
  expect(responses.filter((response) => response.status === 400)).toHaveLength(9);
  const found = await request(world.referral.server).get('/referrals').query({ email }).set(internalHeaders(programId)).expect(200);
  expect(found.body).toHaveLength(1);
});

test('the email must be a valid address', async () => {
  const affiliate = await createAffiliate(world, programId);
  const response = await post({ affiliateId: affiliate.id, email: 'not-an-email' }).expect(400);
  expect(response.body.error).toMatch(/^email: /);
});

test('status is active or inactive only', async () => {
  const affiliate = await createAffiliate(world, programId);
  const inactive = await post({ affiliateId: affiliate.id, email: referralEmail(), status: 'inactive' }).expect(200);
  expect(inactive.body.status).toBe('inactive');
  const response = await post({ affiliateId: affiliate.id, email: referralEmail(), status: 'cancelled' }).expect(400);
  expect(response.body.error).toMatch(/^status: /);
});

test('creating a referral emits referral.created with the referral', async () => {
  const affiliate = await createAffiliate(world, programId);
  const created = Referral.parse((await post({ affiliateId: affiliate.id, email: referralEmail() }).expect(200)).body);
  const event = await eventually(() => {
    const found = world.events.find((candidate) => candidate.type === 'referral.created' && candidate.data.id === created.id);
    if (!found) throw new Error('referral.created not received yet');
    return found;
  });
  expect(event.programId).toBe(programId);
  expect(Referral.parse(event.data)).toEqual(created);
});

test('an affiliate of another program cannot be used, and its referrals stay invisible', async () => {
  const otherProgram = newProgramId();
  const foreignAffiliate = await createAffiliate(world, otherProgram);
  await post({ affiliateId: foreignAffiliate.id, email: referralEmail() }).expect(400);
  const email = referralEmail();
  const foreign = await post({ affiliateId: foreignAffiliate.id, email }, otherProgram).expect(200);
  await request(world.referral.server).get('/referrals').query({ id: foreign.body.id }).set(internalHeaders(programId)).expect(404);
  const byEmail = await request(world.referral.server).get('/referrals').query({ email }).set(internalHeaders(programId)).expect(200);
  expect(byEmail.body).toEqual([]);
  // The same customer may be referred in both programs.
  const affiliate = await createAffiliate(world, programId);
  await post({ affiliateId: affiliate.id, email }).expect(200);
});

test('with the affiliate service down, creating a referral is a 503 and records nothing', async () => {
  const affiliate = await createAffiliate(world, programId);
  const settings = world.referral.context.settings;
  // Port 1 is never served on a test machine: the connection is refused at once, as with a service that is down.
  const cut = await bootService(testServiceSettings('referral', { exchange: settings.exchange, dbName: settings.dbName }), (context) =>
    buildReferralService(context, { affiliateUrl: 'http://127.0.0.1:1' }),
  );
  try {
    const email = referralEmail();
    const response = await request(cut.server)
      .post('/referrals')
      .set(internalHeaders(programId))
      .send({ affiliateId: affiliate.id, email })
      .expect(503);
    expect(response.body).toMatchObject({ error: 'The affiliate service is unavailable; retry later' });
    expect(
      (await request(world.referral.server).get('/referrals').query({ email }).set(internalHeaders(programId)).expect(200)).body,
    ).toEqual([]);
  } finally {
    await cut.stop();
  }
});

test('identifiers naming two different affiliates are a 400 naming both, and no referral is stored', async () => {
  const [ada, grace] = [await createAffiliate(world, programId), await createAffiliate(world, programId)];
  const email = referralEmail();
  const response = await post({ link: grace.affiliateLinks[0]!.link, affiliateId: ada.id, email }).expect(400);
  expect(response.body.error).toBe(
    `affiliateId: ${ada.id} names another affiliate than link ${grace.affiliateLinks[0]!.link}; send identifiers of one affiliate, or only one of them`,
  );
  const click = Click.parse(
    (
      await request(world.affiliate.server)
        .post('/clicks')
        .set(internalHeaders(programId))
        .send({ link: ada.affiliateLinks[0]!.link })
        .expect(200)
    ).body,
  );
  await post({ clickId: click.clickId, affiliateEmail: grace.email, email }).expect(400);
  expect(
    (await request(world.referral.server).get('/referrals').query({ email }).set(internalHeaders(programId)).expect(200)).body,
  ).toEqual([]);
});

test('identifiers that all name the same affiliate are accepted, with the most specific one attributing', async () => {
  const affiliate = await createAffiliate(world, programId);
  const link = affiliate.affiliateLinks[0]!;
  const response = await post({
    link: link.link,
    affiliateId: affiliate.id,
    affiliateEmail: affiliate.email,
    email: referralEmail(),
  }).expect(200);
  expect(Referral.parse(response.body)).toMatchObject({ affiliateId: affiliate.id, linkId: link.id });
});
