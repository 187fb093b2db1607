import { newProgramId, startAffiliateService, type Harness } from './affiliate-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

const huge = 'x'.repeat(100_000);
/** Long enough to break every length limit, short enough to fit in a request line. */
const long = 'x'.repeat(5_000);
const operator = { $ne: null };

/** Variations of a valid body: every field replaced by hostile values, plus unknown and prototype-polluting keys. */
function hostileBodies(valid: Record<string, unknown>): unknown[] {
  const bodies: unknown[] = [
    null,
    [],
    'text',
    42,
    {},
    { ...valid, unknown: 1 },
    JSON.parse(`{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}`),
  ];
  for (const field of Object.keys(valid)) {
    for (const value of [null, 42, -1, 1.5, true, huge, operator, { nested: { deep: 'x' } }, ['a'], '', '   ']) {
      bodies.push({ ...valid, [field]: value });
    }
  }
  return bodies;
}

test('bad input on every route is a 400 with a message, never a 500', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const affiliate = (await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', affiliateLink: 'ann' }))
    .body;
  const writes: ['post' | 'put' | 'delete', string, Record<string, unknown>][] = [
    ['post', '/affiliates', { firstName: 'Bob', lastName: 'Lee', email: 'bob@example.com', affiliateLink: 'bob', commissionRate: 10 }],
    [
      'put',
      '/affiliates',
      { affiliateId: affiliate.id, firstName: 'A', email: 'a2@example.com', status: 'ACTIVE', commissionRate: 5, affiliateLink: 'ann-3' },
    ],
    ['delete', '/affiliates', { affiliateId: affiliate.id }],
    ['post', '/links', { link: 'ann-2', affiliateId: affiliate.id }],
    ['put', '/links', { linkId: affiliate.affiliateLinks[0].id, newLink: 'ann-4' }],
    ['delete', '/links', { linkId: affiliate.affiliateLinks[0].id }],
    ['post', '/clicks', { link: 'ann', landingUrl: 'https://example.com/' }],
  ];
  const failures: unknown[] = [];
  for (const [method, path, valid] of writes) {
    for (const body of hostileBodies(valid)) {
      const response = await api[method](path, body);
      // Some variations stay valid (an unchanged optional field); the rest must be refused with a message.
      const refused = [400, 404].includes(response.status) && typeof response.body.error === 'string';
      if (response.status !== 200 && !refused)
        failures.push({ method, path, body: JSON.stringify(body).slice(0, 120), status: response.status });
    }
  }
  expect(failures).toEqual([]);
  const malformed = await api.post('/affiliates').set('content-type', 'application/json').send('{"firstName": ');
  expect(malformed.status).toBe(400);

  const queries: [string, Record<string, string>][] = [
    ['/affiliates', { limit: '0' }],
    ['/affiliates', { limit: '-1' }],
    ['/affiliates', { limit: '1.5' }],
    ['/affiliates', { limit: '1001' }],
    ['/affiliates', { limit: 'many' }],
    ['/affiliates', { startingAfter: 'no-such-id' }],
    ['/affiliates', { id: long }],
    ['/affiliates', { unknown: 'x' }],
    ['/links', { id: long }],
    ['/links', { limit: '-5' }],
    ['/links', { startingAfter: 'nope' }],
    ['/links', { other: '1' }],
    ['/internal/affiliates', {}],
    ['/internal/attribution', {}],
    ['/internal/attribution', { clickId: '1.5' }],
    ['/internal/attribution', { clickId: '99999999999999999999999' }],
  ];
  for (const [path, query] of queries) {
    const response = await api.get(path, query);
    expect({ path, query: JSON.stringify(query).slice(0, 80), status: response.status }).toEqual({
      path,
      query: JSON.stringify(query).slice(0, 80),
      status: 400,
    });
    expect(typeof response.body.error).toBe('string');
  }
  const repeated = await api.get('/affiliates?id=a&id=b');
  expect(repeated.status).toBe(400);
  const bracketed = await api.get('/links?link[$ne]=x');
  expect(bracketed.status).toBe(400);
});
