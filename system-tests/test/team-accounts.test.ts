import { apiClient, checkedFetch, System, type ApiResponse, type MemberSession } from '../harness';

/**
 * Team accounts (issue 32) against the whole system as `npm start` runs it: members made with
 * System.memberSession (the operator's invite, accepted with a password), each answer of the team
 * routes held against the published document (checkedFetch), and a key an OWNER makes in the console
 * working on the services' routes.
 */
let system: System;

beforeAll(async () => {
  system = await System.start();
}, 180_000);

afterAll(async () => {
  await system?.stop();
});

/** A request of a member's session as the console's page makes it: the cookie, and on a write the CSRF token and the gateway's origin. */
async function asMember(
  session: MemberSession,
  method: string,
  path: string,
  body?: unknown,
): Promise<Pick<ApiResponse, 'status' | 'body'>> {
  const write = method !== 'GET';
  const response = await checkedFetch(`${system.gatewayUrl}/api/v1${path}`, {
    method,
    headers: {
      cookie: session.cookie,
      ...(write ? { 'x-csrf-token': session.csrfToken, origin: system.gatewayUrl } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

test("an OWNER made by the operator's invite manages the team through the whole system, every answer as the document says", async () => {
  const { programId } = await system.createProgram();
  const owner = await system.memberSession(programId, 'OWNER');
  const session = await asMember(owner, 'GET', '/team/session');
  expect(session).toMatchObject({ status: 200, body: { member: { id: owner.memberId, email: owner.email, role: 'OWNER' } } });

  const invited = await asMember(owner, 'POST', '/team/members', { email: 'finance@example.com', role: 'FINANCE' });
  expect(invited.status).toBe(200);
  const listed = await asMember(owner, 'GET', '/team/members');
  expect(listed.body.invites).toEqual([invited.body.invite]);
  const analyst = await system.memberSession(programId, 'ANALYST');
  expect((await asMember(owner, 'PUT', '/team/members', { id: analyst.memberId, role: 'FINANCE' })).body.role).toBe('FINANCE');
  expect((await asMember(analyst, 'GET', '/team/session')).status).toBe(401);
  expect(await asMember(owner, 'DELETE', '/team/members', { id: invited.body.invite.id })).toEqual({
    status: 200,
    body: { id: invited.body.invite.id, deleted: true },
  });
  expect((await asMember(owner, 'DELETE', '/team/members', { id: owner.memberId })).body.code).toBe('last_owner');
  expect((await asMember(owner, 'POST', '/team/totp')).body.otpauthUrl).toMatch(/^otpauth:\/\/totp\//);

  const wrong = await checkedFetch(`${system.gatewayUrl}/api/v1/team/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: owner.email, password: `${owner.password}-not` }),
  });
  expect(wrong.status).toBe(401);
  expect(await asMember(owner, 'DELETE', '/team/session')).toEqual({ status: 200, body: { signedOut: true } });
  expect((await asMember(owner, 'GET', '/team/members')).status).toBe(401);
});

test("a key an OWNER makes in the console works on the services' routes, and an API key is refused on the team's", async () => {
  const { programId, key } = await system.createProgram();
  const owner = await system.memberSession(programId, 'OWNER');
  const created = await asMember(owner, 'POST', '/api-keys', { scopes: ['read', 'write'] });
  expect(created.status).toBe(200);
  const integrator = apiClient(`${system.gatewayUrl}/api/v1`, created.body.key);
  const affiliate = await integrator.post('/affiliates', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
  expect(affiliate.status).toBe(200);
  expect((await integrator.get(`/affiliates?id=${affiliate.body.id}`)).body.email).toBe('ada@example.com');
  const keys = await asMember(owner, 'GET', '/api-keys');
  expect(keys.body.map((listed: { id: string }) => listed.id)).toEqual(expect.arrayContaining([created.body.id]));

  const refused = await apiClient(`${system.gatewayUrl}/api/v1`, key).get('/team/members');
  expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'team_session_required' });
});
