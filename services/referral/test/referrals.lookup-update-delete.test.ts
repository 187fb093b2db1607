import { NumberedErrorBody, Referral } from '@affiliate/contracts';
import { eventually, internalHeaders, newProgramId } from '@affiliate/platform/testing';
import request from 'supertest';
import { z } from 'zod';
import { createAffiliate, referralEmail, startReferralWorld, type ReferralWorld } from './harness';

let world: ReferralWorld;
beforeAll(async () => {
  world = await startReferralWorld();
});
afterAll(() => world.stop());

const UpdatedResponse = z.object({ message: z.literal('Referral updated successfully'), referral: Referral }).strict();

async function newReferral(programId: string, fields: Record<string, unknown> = {}): Promise<Referral> {
  const affiliate = await createAffiliate(world, programId);
  const response = await request(world.referral.server)
    .post('/referrals')
    .set(internalHeaders(programId))
    .send({ affiliateId: affiliate.id, email: referralEmail(), ...fields })
    .expect(200);
  return Referral.parse(response.body);
}

const get = (programId: string, query: Record<string, string>) =>
  request(world.referral.server).get('/referrals').query(query).set(internalHeaders(programId));
const put = (programId: string, body: object) =>
  request(world.referral.server).put('/referrals').set(internalHeaders(programId)).send(body);
const del = (programId: string, body: object) =>
  request(world.referral.server).delete('/referrals').set(internalHeaders(programId)).send(body);

async function eventFor(type: string, id: string) {
  return eventually(() => {
    const found = world.events.find((event) => event.type === type && event.data.id === id);
    if (!found) throw new Error(`${type} for ${id} not received yet`);
    return found;
  });
}

test('GET by id returns the one referral; an unknown id is a 404', async () => {
  const programId = newProgramId();
  const referral = await newReferral(programId);
  expect(Referral.parse((await get(programId, { id: referral.id }).expect(200)).body)).toEqual(referral);
  const missing = await get(programId, { id: '00000000-0000-4000-8000-000000000000' }).expect(404);
  expect(missing.body.error).toMatch(/No referral with id/);
});

test('GET by email, affiliateId or referredUserExternalId returns arrays', async () => {
  const programId = newProgramId();
  const referral = await newReferral(programId, { referredUserExternalId: 'cus_42' });
  const byEmail = await get(programId, { email: referral.email.toUpperCase() }).expect(200);
  expect(z.array(Referral).parse(byEmail.body)).toEqual([referral]);
  const byAffiliate = await get(programId, { affiliateId: referral.affiliateId }).expect(200);
  expect(z.array(Referral).parse(byAffiliate.body)).toEqual([referral]);
  const byExternalId = await get(programId, { referredUserExternalId: 'cus_42' }).expect(200);
  expect(z.array(Referral).parse(byExternalId.body)).toEqual([referral]);
  expect((await get(programId, { referredUserExternalId: 'cus_none' }).expect(200)).body).toEqual([]);
});

test('GET with no lookup lists the program newest first, paged with a Link header', async () => {
  const programId = newProgramId();
  const first = await newReferral(programId);
  const second = await newReferral(programId);
  const third = await newReferral(programId);
  const all = await get(programId, {}).expect(200);
  expect(all.body.map((referral: Referral) => referral.id)).toEqual([third.id, second.id, first.id]);
  const page = await get(programId, { limit: '2' }).expect(200);
  expect(page.body).toHaveLength(2);
  expect(page.headers.link).toBe(`</referrals?limit=2&startingAfter=${second.id}>; rel="next"`);
  const rest = await get(programId, { limit: '2', startingAfter: second.id }).expect(200);
  expect(rest.body.map((referral: Referral) => referral.id)).toEqual([first.id]);
  expect(rest.headers.link).toBeUndefined();
});

test('PUT changes the spec fields and answers "Referral updated successfully" with the referral', async () => {
  const programId = newProgramId();
  const referral = await newReferral(programId);
  const email = referralEmail();
  const response = await put(programId, {
    referralId: referral.id,
    name: 'Grace Hopper',
    email,
    referredUserExternalId: 'cus_7',
    plan: 'enterprise',
    status: 'inactive',
  }).expect(200);
  const body = UpdatedResponse.parse(response.body);
  expect(body.referral).toMatchObject({
    id: referral.id,
    name: 'Grace Hopper',
    email,
    referredUserExternalId: 'cus_7',
    plan: 'enterprise',
    status: 'inactive',
  });
  expect(Referral.parse((await get(programId, { id: referral.id }).expect(200)).body)).toEqual(body.referral);
});

test('PUT emits referral.updated with the current state only', async () => {
  const programId = newProgramId();
  const referral = await newReferral(programId);
  const updated = UpdatedResponse.parse((await put(programId, { referralId: referral.id, plan: 'starter' }).expect(200)).body).referral;
  const event = await eventFor('referral.updated', referral.id);
  expect(Referral.strict().parse(event.data)).toEqual(updated);
});

test('PUT errors use the numbered shape { error: <status>, message }', async () => {
  const programId = newProgramId();
  const referral = await newReferral(programId);
  const missing = await put(programId, { referralId: '00000000-0000-4000-8000-000000000000', plan: 'x' }).expect(404);
  expect(NumberedErrorBody.parse(missing.body)).toMatchObject({
    error: 404,
    message: 'No referral with id 00000000-0000-4000-8000-000000000000 in this program',
  });
  const badStatus = await put(programId, { referralId: referral.id, status: 'past_due' }).expect(400);
  expect(NumberedErrorBody.parse(badStatus.body)).toMatchObject({ error: 400, message: expect.stringMatching(/^status: /) });
  const badEmail = await put(programId, { referralId: referral.id, email: 'nope' }).expect(400);
  expect(NumberedErrorBody.parse(badEmail.body)).toMatchObject({ error: 400, message: expect.stringMatching(/^email: /) });
  const nothing = await put(programId, { referralId: referral.id }).expect(400);
  expect(nothing.body).toMatchObject({
    error: 400,
    message: 'Nothing to update: send name, email, referredUserExternalId, plan or status',
  });
  const noId = await put(programId, { plan: 'x' }).expect(400);
  expect(NumberedErrorBody.parse(noId.body)).toMatchObject({ error: 400, message: 'referralId is required' });
});

test('PUT cannot give a referral the email of another referral of the program', async () => {
  const programId = newProgramId();
  const taken = await newReferral(programId);
  const referral = await newReferral(programId);
  const response = await put(programId, { referralId: referral.id, email: taken.email }).expect(400);
  expect(response.body).toMatchObject({ error: 400, message: 'A referral with this email already exists' });
  await put(programId, { referralId: referral.id, email: referral.email.toUpperCase() }).expect(200);
});

test('DELETE removes the referral, emits referral.deleted with only the id, and frees its email', async () => {
  const programId = newProgramId();
  const referral = await newReferral(programId);
  expect((await del(programId, { referralId: referral.id }).expect(200)).body).toEqual({ id: referral.id, deleted: true });
  await get(programId, { id: referral.id }).expect(404);
  const event = await eventFor('referral.deleted', referral.id);
  expect(event.data).toEqual({ id: referral.id });
  await request(world.referral.server)
    .post('/referrals')
    .set(internalHeaders(programId))
    .send({ affiliateId: referral.affiliateId, email: referral.email })
    .expect(200);
  await del(programId, { referralId: referral.id }).expect(404);
});

test('a referral of another program can be neither read, changed nor deleted', async () => {
  const owner = newProgramId();
  const stranger = newProgramId();
  const referral = await newReferral(owner);
  await get(stranger, { id: referral.id }).expect(404);
  expect((await get(stranger, { affiliateId: referral.affiliateId }).expect(200)).body).toEqual([]);
  await put(stranger, { referralId: referral.id, plan: 'stolen' }).expect(404);
  await del(stranger, { referralId: referral.id }).expect(404);
  expect(Referral.parse((await get(owner, { id: referral.id }).expect(200)).body)).toEqual(referral);
});
