import { parse } from 'csv-parse/sync';
import { createAffiliate, newProgramId, startAffiliateService, type Api, type Harness } from './affiliate-service';

/**
 * GET /affiliates filters (status, a createdAt period) and its CSV export (format=csv), against the
 * real database. Creation times are set in the database to exact instants, so the bounds are tested
 * to the millisecond; names with a line break are put there too, as data stored before input
 * refused control characters would be found.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(() => harness.stop());

const stored = () => harness.service.context.connection.collection('affiliates');
const setStored = (id: string, fields: Record<string, unknown>) => stored().updateOne({ _id: id as never }, { $set: fields });

/** Three affiliates created at 10:00, 11:00 and 12:00 on 1 January 2026 (exactly), the middle one PENDING. */
async function threeAffiliates(api: Api, tag: string) {
  const created = [];
  for (const [index, hour] of ['10', '11', '12'].entries()) {
    const affiliate = await createAffiliate(api, `${tag}-${index}@example.com`);
    await setStored(affiliate.id, { createdAt: new Date(`2026-01-01T${hour}:00:00.000Z`) });
    created.push(affiliate);
  }
  await api.put('/affiliates', { affiliateId: created[1]!.id, status: 'PENDING' }).expect(200);
  return created as [(typeof created)[0], (typeof created)[0], (typeof created)[0]];
}

const idsOf = (body: { id: string }[]) => body.map((affiliate) => affiliate.id);

test('status=PENDING lists only the affiliates waiting for approval', async () => {
  const api = harness.api(newProgramId());
  const [, pending] = await threeAffiliates(api, 'status');
  expect(idsOf((await api.get('/affiliates', { status: 'PENDING' }).expect(200)).body)).toEqual([pending.id]);
  expect(idsOf((await api.get('/affiliates', { status: 'ACTIVE' }).expect(200)).body)).toHaveLength(2);
});

test('createdAt[gte] includes its instant and createdAt[lt] excludes its own, to the millisecond', async () => {
  const api = harness.api(newProgramId());
  const [ten, eleven, twelve] = await threeAffiliates(api, 'range');
  const between = (gte: string, lt: string) => api.get('/affiliates', { 'createdAt[gte]': gte, 'createdAt[lt]': lt }).expect(200);
  expect(idsOf((await between('2026-01-01T11:00:00.000Z', '2026-01-01T12:00:00.000Z')).body)).toEqual([eleven.id]);
  expect(idsOf((await between('2026-01-01T10:00:00.001Z', '2026-01-01T12:00:00.001Z')).body)).toEqual([twelve.id, eleven.id]);
  // An offset names the same instant: 11:00+01:00 is 10:00Z.
  expect(idsOf((await between('2026-01-01T11:00:00+01:00', '2026-01-01T10:00:00.001Z')).body)).toEqual([ten.id]);
  expect(idsOf((await api.get('/affiliates', { 'createdAt[lt]': '2026-01-01T11:00:00Z', status: 'ACTIVE' }).expect(200)).body)).toEqual([
    ten.id,
  ]);
  // Paging through a period keeps the period (the Link header carries it).
  const first = await api.get('/affiliates', { 'createdAt[gte]': '2026-01-01T10:00:00Z', limit: '2' }).expect(200);
  expect(idsOf(first.body)).toEqual([twelve.id, eleven.id]);
  const next = /<[^?]*\?([^>]*)>/.exec(String(first.headers.link))?.[1];
  expect(Object.fromEntries(new URLSearchParams(next))).toMatchObject({
    'createdAt[gte]': '2026-01-01T10:00:00Z',
    startingAfter: eleven.id,
  });
  expect(idsOf((await api.get('/affiliates', Object.fromEntries(new URLSearchParams(next))).expect(200)).body)).toEqual([ten.id]);
});

test('a period that is not a real instant, that ends before it starts, or that is given beside a lookup is a 400 naming the parameter', async () => {
  const api = harness.api(newProgramId());
  expect((await api.get('/affiliates', { 'createdAt[gte]': 'yesterday' }).expect(400)).body.error).toMatch(/^createdAt\[gte\]/);
  expect(
    (await api.get('/affiliates', { 'createdAt[gte]': '2026-02-01T00:00:00Z', 'createdAt[lt]': '2026-01-01T00:00:00Z' }).expect(400)).body
      .error,
  ).toBe('createdAt[gte] must not be after createdAt[lt]');
  // A lookup answers one affiliate: a period or an export beside it is refused, not ignored.
  const ann = await createAffiliate(api, 'ann@example.com');
  expect((await api.get('/affiliates', { id: ann.id, format: 'csv' }).expect(400)).body.error).toBe(
    'format=csv applies to the list: it does not combine with id or email',
  );
  expect((await api.get('/affiliates', { email: ann.email, 'createdAt[lt]': '2030-01-01T00:00:00Z' }).expect(400)).body.error).toBe(
    'createdAt[lt] applies to the list: it does not combine with id or email',
  );
});

test('format=csv streams every filtered affiliate with a header row, formulas and line breaks defused', async () => {
  const api = harness.api(newProgramId());
  const [ten, eleven, twelve] = await threeAffiliates(api, 'csv');
  await setStored(ten.id, { firstName: '=HYPERLINK("http://evil.example")', lastName: 'Lee\n=1+2' });
  await setStored(twelve.id, { firstName: '+SUM(A1)' });
  const csv = await api.get('/affiliates', { format: 'csv', status: 'ACTIVE' }).expect(200);
  expect(csv.headers['content-type']).toMatch(/^text\/csv/);
  expect(csv.headers['content-disposition']).toBe('attachment; filename="affiliates.csv"');
  const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
  expect(rows.map((row) => row.id)).toEqual([twelve.id, ten.id]);
  expect(rows[1]).toEqual({
    id: ten.id,
    first_name: `'=HYPERLINK("http://evil.example")`,
    last_name: "Lee\n'=1+2",
    email: ten.email,
    status: 'ACTIVE',
    commission_rate: String(ten.commissionRate),
    created_at: '2026-01-01T10:00:00.000Z',
  });
  expect(rows[0]?.first_name).toBe("'+SUM(A1)");
  for (const line of csv.text.split(/\r\n|\r|\n/)) expect(line).not.toMatch(/^[=+\-@\t]/);
  // Accept: text/csv asks for the same file; a period filters it as it filters the list.
  const accepted = await api.get('/affiliates', { 'createdAt[gte]': '2026-01-01T11:00:00Z' }).set('accept', 'text/csv').expect(200);
  expect((parse(accepted.text, { columns: true }) as Record<string, string>[]).map((row) => row.id)).toEqual([twelve.id, eleven.id]);
  // With nothing matching, the file is the header row alone.
  expect((await api.get('/affiliates', { format: 'csv', status: 'DISABLED' }).expect(200)).text).toBe(
    '"id","first_name","last_name","email","status","commission_rate","created_at"\r\n',
  );
});

test('the filters and the export never reach another program, and an unknown filter is a 400 naming it', async () => {
  const mine = harness.api(newProgramId());
  const theirs = harness.api(newProgramId());
  const [, myPending] = await threeAffiliates(mine, 'mine');
  await threeAffiliates(theirs, 'theirs');
  expect(idsOf((await mine.get('/affiliates', { status: 'PENDING' }).expect(200)).body)).toEqual([myPending.id]);
  expect(idsOf((await mine.get('/affiliates', { 'createdAt[gte]': '2026-01-01T00:00:00Z' }).expect(200)).body)).toHaveLength(3);
  const csv = parse((await mine.get('/affiliates', { format: 'csv' }).expect(200)).text, { columns: true }) as Record<string, string>[];
  expect(csv.map((row) => row.email).sort()).toEqual(['mine-0@example.com', 'mine-1@example.com', 'mine-2@example.com']);
  const unknown = await mine.get('/affiliates', { statuss: 'PENDING' }).expect(400);
  expect(unknown.body.error).toBe('Unknown field in query: statuss');
  expect((await mine.get('/affiliates', { 'createdAt[gt]': '2026-01-01T00:00:00Z' }).expect(400)).body.error).toBe(
    'Unknown field in query: createdAt[gt]',
  );
});

test('GET /links takes a createdAt period on the list, alone or with affiliateId (then a filter of the list, paged), and refuses one beside a lookup', async () => {
  const api = harness.api(newProgramId());
  const [ten, eleven] = await threeAffiliates(api, 'links');
  const links = harness.service.context.connection.collection('links');
  const linkOf = (affiliate: { affiliateLinks: { id: string }[] }) => affiliate.affiliateLinks[0]!.id;
  await links.updateOne({ _id: linkOf(ten) as never }, { $set: { createdAt: new Date('2026-01-01T10:00:00.000Z') } });
  await links.updateOne({ _id: linkOf(eleven) as never }, { $set: { createdAt: new Date('2026-01-01T11:00:00.000Z') } });
  const listed = await api.get('/links', { 'createdAt[gte]': '2026-01-01T10:00:00Z', 'createdAt[lt]': '2026-01-01T11:00:00Z' }).expect(200);
  expect(idsOf(listed.body)).toEqual([linkOf(ten)]);
  // affiliateId with a period or a page filters the list; alone it stays the lookup of every link of the affiliate.
  expect(idsOf((await api.get('/links', { affiliateId: ten.id, 'createdAt[gte]': '2026-01-01T10:00:00Z' }).expect(200)).body)).toEqual([
    linkOf(ten),
  ]);
  expect((await api.get('/links', { affiliateId: eleven.id, 'createdAt[lt]': '2026-01-01T11:00:00Z' }).expect(200)).body).toEqual([]);
  expect(idsOf((await api.get('/links', { affiliateId: ten.id, limit: '1' }).expect(200)).body)).toEqual([linkOf(ten)]);
  expect(idsOf((await api.get('/links', { affiliateId: ten.id }).expect(200)).body)).toEqual([linkOf(ten)]);
  const refused = await api.get('/links', { affiliateEmail: ten.email, 'createdAt[gte]': '2026-01-01T10:00:00Z' }).expect(400);
  expect(refused.body.error).toBe('createdAt[gte] applies to the list: it does not combine with id, link, affiliateId or affiliateEmail');
  expect((await api.get('/links', { id: linkOf(ten), limit: '1' }).expect(400)).body.error).toBe(
    'limit applies to the list: it does not combine with id, link, affiliateId or affiliateEmail',
  );
});
