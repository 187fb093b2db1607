import { Attribution, InternalAffiliate } from '@affiliate/contracts';
import { bootService } from '@affiliate/platform';
import { serviceApi, testServiceSettings } from '@affiliate/platform/testing';
import { buildAffiliateService } from '../src/service';
import { newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

test('GET /internal/affiliates resolves an affiliate by id or email within the program, 404 otherwise', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const created = await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', commissionRate: 30 });
  // Without a plan of its own or a default plan, the affiliate earns its own rate, as before plans existed.
  const ownRate = {
    id: null,
    commissionType: 'PERCENTAGE',
    rate: 30,
    recurring: 'FOREVER',
    holdDays: 30,
    minimumPayout: null,
    tierRate: null,
  };
  const expected = {
    id: created.body.id,
    firstName: 'Ann',
    lastName: 'Lee',
    email: 'ann@example.com',
    status: 'ACTIVE',
    commissionRate: 30,
    plan: expect.objectContaining(ownRate),
    payoutDetails: null,
  };
  expect(InternalAffiliate.parse((await api.get('/internal/affiliates', { id: created.body.id })).body)).toEqual(expected);
  expect(InternalAffiliate.parse((await api.get('/internal/affiliates', { email: 'ANN@example.com' })).body)).toEqual(expected);
  const missing = await api.get('/internal/affiliates', { email: 'nobody@example.com' });
  expect(missing.status).toBe(404);
  expect(missing.body.error).toMatch(/No affiliate/);
  expect((await harness.api(newProgramId()).get('/internal/affiliates', { id: created.body.id })).status).toBe(404);
  expect((await api.get('/internal/affiliates')).status).toBe(400);
});

test('GET /internal/attribution resolves a click id, a slug or an affiliate to its affiliate, 404 otherwise', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = (await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', affiliateLink: 'Ann' }))
    .body;
  const link = affiliate.affiliateLinks[0];
  const click = (await api.post('/clicks', { link: 'ann' })).body;
  const attribution = async (query: Record<string, string>) => Attribution.parse((await api.get('/internal/attribution', query)).body);
  expect(await attribution({ clickId: String(click.clickId) })).toEqual({
    affiliateId: affiliate.id,
    linkId: link.id,
    link: 'Ann',
    clickId: click.clickId,
  });
  expect(await attribution({ link: 'ANN' })).toEqual({ affiliateId: affiliate.id, linkId: link.id, link: 'Ann', clickId: null });
  expect(await attribution({ affiliateId: affiliate.id })).toEqual({ affiliateId: affiliate.id, linkId: null, link: null, clickId: null });
  expect(await attribution({ affiliateEmail: 'ann@example.com' })).toEqual({
    affiliateId: affiliate.id,
    linkId: null,
    link: null,
    clickId: null,
  });
  const unresolvable: Record<string, string>[] = [{ clickId: '999' }, { link: 'nobody' }, { affiliateEmail: 'nobody@example.com' }];
  for (const query of unresolvable) {
    expect((await api.get('/internal/attribution', query)).status).toBe(404);
  }
  expect((await harness.api(newProgramId()).get('/internal/attribution', { clickId: String(click.clickId) })).status).toBe(404);
  expect((await api.get('/internal/attribution', { clickId: '-1' })).status).toBe(400);
});

test('GET /internal/affiliate-activity gives every affiliate of the program its clicks of the period, reading names and emails only, never payout details', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const ann = (
    await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', affiliateLink: 'ann-activity' })
  ).body;
  const bob = (await api.post('/affiliates', { firstName: 'Bob', lastName: 'Ray', email: 'bob@example.com' })).body;
  const iban = 'DE89370400440532013000';
  await api.put('/affiliates', { affiliateId: bob.id, payoutDetails: { method: 'BANK_TRANSFER', accountHolder: 'Bob Ray', iban } });
  for (let click = 0; click < 3; click += 1) expect((await api.post('/clicks', { link: 'ann-activity' })).status).toBe(200);
  await harness.api(newProgramId()).post('/affiliates', { firstName: 'Eve', lastName: 'Other', email: 'eve@example.com' });

  // What the query for the program's affiliates asks the database for (mongoose's own query hook).
  const projections: unknown[] = [];
  const connection = harness.service.context.connection;
  connection.set('debug', (collection: string, method: string, filter: { programId?: string }, projection: unknown) => {
    if (collection === 'affiliates' && method === 'find' && filter?.programId === programId) projections.push(projection);
  });
  let response;
  try {
    response = await api.get('/internal/affiliate-activity', { from: new Date(Date.now() - 60_000).toISOString() });
  } finally {
    connection.set('debug', false);
  }
  expect(response.status).toBe(200);
  expect(response.body).toEqual([
    { affiliateId: bob.id, name: 'Bob Ray', email: 'bob@example.com', clicks: 0, referrals: 0, reportingCurrency: 'USD' },
    { affiliateId: ann.id, name: 'Ann Lee', email: 'ann@example.com', clicks: 3, referrals: 0, reportingCurrency: 'USD' },
  ]);
  expect(JSON.stringify(response.body)).not.toContain(iban);
  expect(projections).toEqual([expect.objectContaining({ projection: { _id: 1, firstName: 1, lastName: 1, email: 1 } })]);
});

test("GET /internal/affiliates answers another replica's change at once (a payout's new IBAN, a removed affiliate); only a sale's lookup (recent=true) may answer a read of a moment ago, and sees its own replica's changes at once", async () => {
  const programId = newProgramId();
  const { dbName, exchange } = harness.service.context.settings;
  const second = await bootService(testServiceSettings('affiliate', { dbName, exchange }), (context) => buildAffiliateService(context));
  try {
    const [api, other] = [harness.api(programId), serviceApi(second.url, programId)];
    const details = (iban: string) => ({ method: 'BANK_TRANSFER', accountHolder: 'Ann Lee', iban });
    const ann = (await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com' })).body;
    await api.put('/affiliates', { affiliateId: ann.id, payoutDetails: details('DE89370400440532013000') }).expect(200);
    const lookup = async (query: Record<string, string>) =>
      InternalAffiliate.parse((await api.get('/internal/affiliates', { id: ann.id, ...query }).expect(200)).body);
    // A sale's lookup: this replica now holds Ann as read.
    expect((await lookup({ risk: 'true', recent: 'true' })).payoutDetails?.iban).toBe('DE89370400440532013000');

    // The IBAN replaced on the other replica: a payout run's lookup (no recent) pays the new one at once.
    await other.put('/affiliates', { affiliateId: ann.id, payoutDetails: details('GB29NWBK60161331926819') }).expect(200);
    expect((await lookup({})).payoutDetails?.iban).toBe('GB29NWBK60161331926819');
    // This replica's own change is seen at once by a sale's lookup too, with what is stored.
    await api.put('/affiliates', { affiliateId: ann.id, commissionRate: 25 }).expect(200);
    expect(await lookup({ risk: 'true', recent: 'true' })).toMatchObject({
      commissionRate: 25,
      payoutDetails: expect.objectContaining({ iban: 'GB29NWBK60161331926819' }),
    });

    // Removed on the other replica: gone at once for a code's assignment, a payout's payee and a referral's attribution.
    await other.delete('/affiliates', { affiliateId: ann.id }).expect(200);
    expect((await api.get('/internal/affiliates', { id: ann.id })).status).toBe(404);
    expect((await api.get('/internal/attribution', { affiliateId: ann.id })).status).toBe(404);
    expect((await api.get('/internal/affiliates', { id: ann.id, recent: 'yes' })).status).toBe(400);
  } finally {
    await second.stop();
  }
});
