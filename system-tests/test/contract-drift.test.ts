import { contractViolations } from '../contract';

// Every answer the system tests get passes through this check (harness.ts); these show it bites.
const headers = (values: Record<string, string>) =>
  new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1', ...values });

test('an answer whose body differs from the document is a violation naming the field', () => {
  const violations = contractViolations({
    method: 'DELETE',
    path: '/api/v1/promotional-codes',
    status: 200,
    headers: headers({}),
    body: { message: 'Promotional code deleted successfully', deletedPromotionalCode: { id: 'x', code: 'y' } },
    text: '',
  });
  expect(violations).toEqual([expect.stringMatching(/must have required property 'id'/)]);
});

test('a status the operation does not document is a violation', () => {
  expect(
    contractViolations({ method: 'GET', path: '/api/v1/coupons', status: 418, headers: headers({}), body: 'I am a teapot', text: '' }),
  ).toEqual([expect.stringMatching(/status 418 is not documented/)]);
});

test('a documented header with a value outside its schema, or a required one missing, is a violation', () => {
  const wrong = contractViolations({
    method: 'GET',
    path: '/api/v1/coupons',
    status: 429,
    headers: headers({ 'retry-after': 'soon' }),
    body: { error: 'slow down', code: 'rate_limited', requestId: 'req-1' },
    text: '',
  });
  expect(wrong).toEqual([expect.stringMatching(/Retry-After: "soon" does not match/)]);
  const missing = contractViolations({
    method: 'GET',
    path: '/api/v1/coupons',
    status: 503,
    headers: headers({}),
    body: { error: 'down', code: 'service_unavailable', requestId: 'req-1' },
    text: '',
  });
  expect(missing).toEqual([expect.stringMatching(/documented header Retry-After is missing/)]);
});

test('paths outside the API (probes, docs) are not judged by the document', () => {
  expect(
    contractViolations({ method: 'GET', path: '/healthz', status: 200, headers: headers({}), body: { status: 'ok' }, text: '' }),
  ).toEqual([]);
});

test('a path under the API that the document lacks may only answer that there is no such route', () => {
  const noSuchRoute = {
    method: 'GET',
    path: '/api/v1/invoices',
    headers: headers({}),
    body: { error: 'No route for GET /api/v1/invoices', code: 'route_missing', requestId: 'req-1' },
    text: '',
  };
  expect(contractViolations({ ...noSuchRoute, status: 404 })).toEqual([]);
  expect(contractViolations({ ...noSuchRoute, status: 200, body: [] })).toEqual([expect.stringMatching(/the document has no path for it/)]);
  expect(contractViolations({ ...noSuchRoute, path: '/admin/v1/secrets', status: 200, body: {} })).toEqual([
    expect.stringMatching(/the document has no path for it/),
  ]);
});

test('a gateway header sent on an answer that does not document it is a violation', () => {
  // A GET takes no Idempotency-Key, so its answers never say they are replays.
  const violations = contractViolations({
    method: 'GET',
    path: '/api/v1/promotional-codes',
    status: 200,
    headers: headers({ 'idempotent-replayed': 'true' }),
    body: [],
    text: '',
  });
  expect(violations).toEqual([expect.stringMatching(/header idempotent-replayed is sent but not documented/)]);
});

test('an error answered without a catalogued code, with a code of another status, or with a requestId other than its X-Request-Id header is a violation', () => {
  const refusal = { method: 'GET', path: '/api/v1/coupons', status: 404, headers: headers({}), text: '' };
  expect(
    contractViolations({
      ...refusal,
      body: { error: 'No coupon with name "x" in this program', code: 'resource_missing', requestId: 'req-1' },
    }),
  ).toEqual([]);
  expect(contractViolations({ ...refusal, body: { error: 'No coupon', code: 'coupon_gone', requestId: 'req-1' } })).toEqual([
    expect.stringMatching(/body does not match the document/),
    expect.stringMatching(/error code "coupon_gone" is not in the catalogue/),
  ]);
  expect(contractViolations({ ...refusal, body: { error: 'No coupon', code: 'rate_limited', requestId: 'req-1' } })).toEqual([
    expect.stringMatching(/error code rate_limited is catalogued for 429, not 404/),
  ]);
  expect(contractViolations({ ...refusal, body: { error: 'No coupon', code: 'resource_missing', requestId: 'req-2' } })).toEqual([
    expect.stringMatching(/error requestId "req-2" is not the X-Request-Id header "req-1"/),
  ]);
  // Off the document (the portal, the sign-up pages) the code and the request id are still checked.
  expect(contractViolations({ ...refusal, path: '/portal/api/links', status: 401, body: { error: 'No portal session' } })).toEqual([
    expect.stringMatching(/error code undefined is not in the catalogue/),
    expect.stringMatching(/error requestId undefined is not the X-Request-Id header/),
  ]);
});
