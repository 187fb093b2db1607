import { EVENT_CATALOGUE, type PublicEventType } from '@affiliate/contracts';
import { gatewayOpenApiDocument } from '../src/openapi/document';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const document = gatewayOpenApiDocument() as unknown as Json;
const METHODS = ['get', 'post', 'put', 'delete'];
const operations = Object.entries(document.paths as Json).flatMap(([path, item]) =>
  METHODS.filter((method) => (item as Json)[method]).map((method) => ({ path, method, operation: (item as Json)[method] as Json })),
);

/** Every schema object in the document, with where it is. */
function schemasIn(node: unknown, at = '#'): { at: string; schema: Json }[] {
  if (Array.isArray(node)) return node.flatMap((child, index) => schemasIn(child, `${at}/${index}`));
  if (typeof node !== 'object' || node === null) return [];
  return [{ at, schema: node as Json }, ...Object.entries(node).flatMap(([key, child]) => schemasIn(child, `${at}/${key}`))];
}

test('every operation has an operationId, unique across the document, so generated clients get real method names', () => {
  const ids = [
    ...operations.map(({ operation }) => operation.operationId),
    ...Object.values(document.webhooks as Json).map((item) => (item as Json).post.operationId),
  ];
  expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});

test('no anyOf lists the same member twice', () => {
  const repeated = schemasIn(document)
    .filter(({ schema }) => Array.isArray(schema.anyOf))
    .filter(
      ({ schema }) =>
        new Set((schema.anyOf as unknown[]).map((member) => JSON.stringify(member))).size !== (schema.anyOf as unknown[]).length,
    )
    .map(({ at }) => at);
  expect(repeated).toEqual([]);
});

test('a nullable enum admits null: no type list with null beside an enum without it', () => {
  const broken = schemasIn(document)
    .filter(
      ({ schema }) =>
        Array.isArray(schema.type) && schema.type.includes('null') && Array.isArray(schema.enum) && !schema.enum.includes(null),
    )
    .map(({ at }) => at);
  expect(broken).toEqual([]);
});

test('each webhook entry says when its event fires, in the words of the event catalogue', () => {
  for (const [type, item] of Object.entries(document.webhooks as Json)) {
    expect({ type, description: (item as Json).post.description }).toEqual({
      type,
      description: EVENT_CATALOGUE[type as PublicEventType].firesWhen,
    });
  }
});

test('webhook payload entries need no credential of ours', () => {
  for (const item of Object.values(document.webhooks as Json)) expect((item as Json).post.security).toEqual([]);
});

test('no schema gives a $ref a null default (openapi-python-client skips such operations)', () => {
  const bodies = operations.map(({ operation }) => operation.requestBody?.content?.['application/json']?.schema).filter(Boolean);
  const components = Object.values(document.components.schemas as Json);
  const offending = schemasIn([...bodies, ...components]).filter(
    ({ schema }) => Array.isArray(schema.allOf) && schema.allOf.some((member: Json) => member.default === null),
  );
  expect(offending.map(({ at }) => at)).toEqual([]);
});

test("409 is documented on writes only, and Idempotency-Key on every public write (the gateway's own PUT /program and publishable keys included)", () => {
  for (const { path, method, operation } of operations) {
    expect({ path, method, conflict: '409' in operation.responses }).toEqual({ path, method, conflict: method !== 'get' });
    const takesKey = (operation.parameters ?? []).some((parameter: Json) => parameter.name === 'idempotency-key');
    // The browser routes answer a narrowed body that is not kept: a page's retry is a new call (deduplicated as a click or by the script).
    // So do the console's team routes (a member's session, never an API key): a sign-in or a session's answer is never stored.
    const write = method === 'post' || method === 'put' || method === 'delete';
    const consoleSession = operation.security?.length === 0 || 'consoleSession' in (operation.security?.[0] ?? {});
    expect({ path, method, takesKey }).toEqual({
      path,
      method,
      takesKey: write && path.startsWith('/api/v1/') && !path.startsWith('/api/v1/browser/') && !consoleSession,
    });
  }
});

test('the headers the gateway sends are documented, and list parameters are described', () => {
  const coupons = document.paths['/api/v1/coupons'];
  expect(Object.keys(coupons.get.responses['200'].headers)).toEqual(
    expect.arrayContaining([
      'X-Request-Id',
      'RateLimit-Policy',
      'RateLimit',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Link',
    ]),
  );
  expect(Object.keys(coupons.post.responses['200'].headers)).toContain('Idempotent-Replayed');
  expect(Object.keys(coupons.get.responses['429'].headers)).toContain('Retry-After');
  expect(Object.keys(coupons.get.responses['401'].headers)).toContain('WWW-Authenticate');
  for (const name of ['limit', 'startingAfter']) {
    expect(coupons.get.parameters.find((parameter: Json) => parameter.name === name)?.description).toEqual(expect.any(String));
  }
});
