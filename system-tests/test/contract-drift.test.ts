import { contractViolations } from '../contract';

// Every answer the system tests get passes through this check (harness.ts); these show it bites.
const headers = (values: Record<string, string>) => new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1', ...values });

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
  expect(contractViolations({ method: 'GET', path: '/api/v1/coupons', status: 418, headers: headers({}), body: { error: 'teapot' }, text: '' })).toEqual([
    expect.stringMatching(/status 418 is not documented/),
  ]);
});

test('a documented header with a value outside its schema, or a required one missing, is a violation', () => {
  const wrong = contractViolations({ method: 'GET', path: '/api/v1/coupons', status: 429, headers: headers({ 'retry-after': 'soon' }), body: { error: 'slow down' }, text: '' });
  expect(wrong).toEqual([expect.stringMatching(/Retry-After: "soon" does not match/)]);
  const missing = contractViolations({ method: 'GET', path: '/api/v1/coupons', status: 503, headers: headers({}), body: { error: 'down' }, text: '' });
  expect(missing).toEqual([expect.stringMatching(/documented header Retry-After is missing/)]);
});

test('paths the document does not describe (probes, docs) are not judged by it', () => {
  expect(contractViolations({ method: 'GET', path: '/healthz', status: 200, headers: headers({}), body: { status: 'ok' }, text: '' })).toEqual([]);
});
