import { API_OPERATIONS, type TeamRole } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import { Secret, TOTP } from 'otpauth';
import request from 'supertest';
import { runAdminCommand } from '../src/cli/admin-commands';
import type { RunningGateway } from '../src/gateway';
import { TeamAccounts } from '../src/team/team-accounts';
import { TeamSessions } from '../src/team/team-sessions';
import {
  adminAuth,
  bearer,
  createProgramWithKey,
  memberPassword,
  memberSession,
  memberWrite,
  spawnGateway,
  startGateway,
  TEST_ADMIN_TOKEN,
  type MemberSession,
  type ProgramWithKey,
} from './support';

/** Sign-in limits small enough to reach: 3 failures per email, 6 per address, in a minute. */
const LOGIN_LIMITS = { account: { points: 3, duration: 60 }, address: { points: 6, duration: 60 } };

let gateway: RunningGateway;
let program: ProgramWithKey;
let owner: MemberSession;

beforeAll(async () => {
  // Loopback is the trusted proxy, so that X-Forwarded-For gives each sign-in attempt the address the test chooses.
  gateway = await startGateway({ trustProxy: 'loopback', teamLoginLimits: LOGIN_LIMITS });
  program = await createProgramWithKey(gateway);
  owner = await memberSession(gateway, program.programId, 'OWNER');
});

afterAll(async () => {
  await gateway?.stop();
});

const api = () => request(gateway.url);
const uniqueAddress = () => `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
const tokenOf = (inviteUrl: string) => new URL(inviteUrl.replace('#/', '')).searchParams.get('token') as string;
const cookieOf = (headers: Record<string, unknown>) => String((headers['set-cookie'] as string[])[0]).split(';')[0] as string;

async function adminInvite(programId: string, email: string, role: TeamRole): Promise<string> {
  const invited = await api().post(`/admin/v1/programs/${programId}/members`).set(adminAuth).send({ email, role }).expect(200);
  return tokenOf(invited.body.inviteUrl);
}

const signIn = (body: Record<string, unknown>, address = uniqueAddress()) =>
  api().post('/api/v1/team/session').set('x-forwarded-for', address).send(body);

const sessionOf = (session: Pick<MemberSession, 'cookie'>) => api().get('/api/v1/team/session').set('cookie', session.cookie);

async function membersOf(session: MemberSession) {
  return (await api().get('/api/v1/team/members').set('cookie', session.cookie).expect(200)).body as {
    members: Array<{ id: string; email: string; role: TeamRole }>;
    invites: Array<{ id: string; email: string }>;
  };
}

test("the operator invites a program's first OWNER, who accepts with a password and is signed in with an httpOnly, Secure, SameSite=Strict cookie", async () => {
  const { programId } = await createProgramWithKey(gateway);
  const invited = await api()
    .post(`/admin/v1/programs/${programId}/members`)
    .set(adminAuth)
    .send({ email: 'Ada@Example.com', role: 'OWNER' })
    .expect(200);
  expect(invited.body.invite).toEqual({ id: expect.any(String), email: 'ada@example.com', role: 'OWNER', expiresAt: expect.any(String) });
  expect(invited.body.inviteUrl).toMatch(new RegExp(`^${gateway.url}/console/#/accept-invite\\?token=[0-9a-f-]{36}\\.[A-Za-z0-9_-]{43}$`));
  const listed = await api().get(`/admin/v1/programs/${programId}/members`).set(adminAuth).expect(200);
  expect(listed.body).toEqual({ members: [], invites: [invited.body.invite] });

  const accepted = await api()
    .post('/api/v1/team/invites/accept')
    .send({ token: tokenOf(invited.body.inviteUrl), password: memberPassword() });
  expect(accepted.status).toBe(200);
  const setCookie = String((accepted.headers['set-cookie'] as unknown as string[])[0]);
  expect(setCookie).toMatch(
    /^__Host-affiliate_console_session=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}; Path=\/; Expires=.*; HttpOnly; Secure; SameSite=Strict$/,
  );
  expect(accepted.body.member).toMatchObject({ email: 'ada@example.com', role: 'OWNER', totpEnabled: false });
  expect(accepted.body.program.id).toBe(programId);
  expect(accepted.body.allowedOperations).toEqual(expect.arrayContaining(['inviteTeamMember', 'createOwnApiKey', 'deleteCommissionPlan']));

  const session = await sessionOf({ cookie: cookieOf(accepted.headers) }).expect(200);
  expect(session.body.member.id).toBe(accepted.body.member.id);
  const after = await api().get(`/admin/v1/programs/${programId}/members`).set(adminAuth).expect(200);
  expect(after.body).toEqual({ members: [accepted.body.member], invites: [] });
  // The operator's invite is in the admin audit record, like every admin act.
  const audit = await api().get('/admin/v1/audit-records').set(adminAuth).expect(200);
  expect(audit.body).toEqual(
    expect.arrayContaining([expect.objectContaining({ action: 'POST /admin/v1/programs/{id}/members', targetId: programId, status: 200 })]),
  );
});

test('an invite link works once: a second acceptance, and a stolen copy used after it, are refused 410 invite_used and sign no one in', async () => {
  const token = await adminInvite(program.programId, `once-${Date.now()}@example.com`, 'ANALYST');
  // Accepted twice at the same moment: exactly one wins.
  const both = await Promise.all([0, 1].map(() => api().post('/api/v1/team/invites/accept').send({ token, password: memberPassword() })));
  expect(both.map((answer) => answer.status).sort()).toEqual([200, 410]);
  const stolen = await api().post('/api/v1/team/invites/accept').send({ token, password: memberPassword() });
  expect(stolen.status).toBe(410);
  expect(stolen.body.code).toBe('invite_used');
  expect(stolen.headers['set-cookie']).toBeUndefined();
  const tampered = `${token.split('.')[0]}.${'A'.repeat(43)}`;
  const forged = await api().post('/api/v1/team/invites/accept').send({ token: tampered, password: memberPassword() });
  expect({ status: forged.status, code: forged.body.code }).toEqual({ status: 401, code: 'invite_invalid' });
});

test('an expired invite is refused 410 invite_expired and makes no member', async () => {
  const email = `late-${Date.now()}@example.com`;
  const token = await adminInvite(program.programId, email, 'FINANCE');
  // 72 hours later, as far as the invite knows.
  await gateway.connection
    .collection('team_invites')
    .updateOne({ _id: token.split('.')[0] as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
  const late = await api().post('/api/v1/team/invites/accept').send({ token, password: memberPassword() });
  expect({ status: late.status, code: late.body.code }).toEqual({ status: 410, code: 'invite_expired' });
  expect((await membersOf(owner)).members.map((member) => member.email)).not.toContain(email);
});

test('a password outside 12 to 128 characters is refused 400 naming password, and the invite still works', async () => {
  const token = await adminInvite(program.programId, `short-${Date.now()}@example.com`, 'ANALYST');
  const short = await api().post('/api/v1/team/invites/accept').send({ token, password: 'too-short' });
  expect({ status: short.status, code: short.body.code, param: short.body.param }).toEqual({
    status: 400,
    code: 'parameter_invalid',
    param: 'password',
  });
  await api().post('/api/v1/team/invites/accept').send({ token, password: memberPassword() }).expect(200);
});

test('a wrong password and an unknown email get the same 401 "Wrong email or password"', async () => {
  const wrong = await signIn({ email: owner.email, password: memberPassword() });
  const unknown = await signIn({ email: `nobody-${Date.now()}@example.com`, password: memberPassword() });
  for (const answer of [wrong, unknown]) {
    expect({ status: answer.status, error: answer.body.error, code: answer.body.code }).toEqual({
      status: 401,
      error: 'Wrong email or password',
      code: 'credentials_invalid',
    });
    expect(answer.headers['set-cookie']).toBeUndefined();
  }
  const right = await signIn({ email: owner.email.toUpperCase(), password: owner.password });
  expect(right.status).toBe(200);
});

test('failed sign-ins for one account are throttled 429 with Retry-After whatever the address, the right password included', async () => {
  const member = await memberSession(gateway, program.programId, 'ANALYST');
  for (let attempt = 0; attempt < LOGIN_LIMITS.account.points; attempt++)
    expect((await signIn({ email: member.email, password: memberPassword() }, uniqueAddress())).status).toBe(401);
  const throttled = await signIn({ email: member.email, password: member.password }, uniqueAddress());
  expect({ status: throttled.status, code: throttled.body.code }).toEqual({ status: 429, code: 'login_throttled' });
  expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  expect(throttled.headers['set-cookie']).toBeUndefined();
  // Another account is not locked by it.
  expect((await signIn({ email: owner.email, password: owner.password }, uniqueAddress())).status).toBe(200);
});

test('failed sign-ins from one address are throttled 429 with Retry-After across accounts', async () => {
  const address = '198.51.100.77';
  for (let attempt = 0; attempt < LOGIN_LIMITS.address.points; attempt++)
    expect((await signIn({ email: `guess-${attempt}@example.com`, password: memberPassword() }, address)).status).toBe(401);
  const throttled = await signIn({ email: owner.email, password: owner.password }, address);
  expect({ status: throttled.status, code: throttled.body.code }).toEqual({ status: 429, code: 'login_throttled' });
  expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  expect((await signIn({ email: owner.email, password: owner.password }, uniqueAddress())).status).toBe(200);
});

test("the stored password hash is argon2id with OWASP's parameters (m=19456 KiB, t=2, p=1), never the password", async () => {
  const stored = await gateway.connection.collection('team_members').findOne({ _id: owner.memberId as never });
  const hash = String(stored?.passwordHash);
  expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  expect(JSON.stringify(stored)).not.toContain(owner.password);
});

test('the password appears in no log line, even with every request logged', async () => {
  const spawned = await spawnGateway({ LOG_LEVEL: 'trace', TRUST_PROXY: 'loopback' });
  try {
    const created = await fetch(`${spawned.url}/admin/v1/programs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Logged program' }),
    });
    const programId = ((await created.json()) as { id: string }).id;
    const invited = await fetch(`${spawned.url}/admin/v1/programs/${programId}/members`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'logged@example.com', role: 'OWNER' }),
    });
    const token = tokenOf(((await invited.json()) as { inviteUrl: string }).inviteUrl);
    const password = `secret-${memberPassword()}`;
    const post = (path: string, body: unknown) =>
      fetch(`${spawned.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/api/v1/team/invites/accept', { token, password })).status).toBe(200);
    expect((await post('/api/v1/team/session', { email: 'logged@example.com', password: `${password}-wrong` })).status).toBe(401);
    expect((await post('/api/v1/team/session', { email: 'logged@example.com', password })).status).toBe(200);
    // Every request was logged; no line carries the password, a wrong one, the invite's secret or a session cookie.
    await eventually(() => expect(spawned.output()).toContain('/api/v1/team/session'));
    const output = spawned.output();
    expect(output).not.toContain(password);
    expect(output).not.toContain(token.split('.')[1]);
    expect(output).not.toMatch(/__Host-affiliate_console_session=[0-9a-f]/);
  } finally {
    await spawned.stop();
  }
}, 60_000);

test('a session ends after the idle time without a request, and each request moves its idle end on', async () => {
  // No waiting on the clock: the stored idle end is moved as time would move it, and read back.
  const member = await memberSession(gateway, program.programId, 'ANALYST');
  const sessionId = member.cookie.split('=')[1]?.split('.')[0];
  const sessions = gateway.connection.collection('team_sessions');
  const idleEndOf = async () => ((await sessions.findOne({ _id: sessionId as never }))?.idleExpiresAt as Date).getTime();
  // Close to its idle end (a minute left of 30): a request moves it on, to the full idle time from now, never past the session's end.
  await sessions.updateOne({ _id: sessionId as never }, { $set: { idleExpiresAt: new Date(Date.now() + 60_000) } });
  const before = await idleEndOf();
  const touched = await sessionOf(member).expect(200);
  const after = await idleEndOf();
  expect(after).toBeGreaterThan(before + 20 * 60_000);
  expect(Date.parse(touched.body.idleExpiresAt)).toBe(after);
  expect(after).toBeLessThanOrEqual(Date.parse(touched.body.expiresAt));
  // Its idle end passed without a request: the session is over, on the team routes and the rest of the API alike.
  await sessions.updateOne({ _id: sessionId as never }, { $set: { idleExpiresAt: new Date(Date.now() - 1000) } });
  const over = await sessionOf(member);
  expect({ status: over.status, code: over.body.code }).toEqual({ status: 401, code: 'unauthenticated' });
  expect((await api().get('/api/v1/program').set('cookie', member.cookie)).status).toBe(401);
});

test('signing out revokes the session at once and clears its cookie', async () => {
  const member = await memberSession(gateway, program.programId, 'ADMIN');
  const out = await api().delete('/api/v1/team/session').set(memberWrite(gateway, member)).expect(200);
  expect(out.body).toEqual({ signedOut: true });
  expect(String((out.headers['set-cookie'] as unknown as string[])[0])).toMatch(
    /^__Host-affiliate_console_session=; Path=\/; Expires=Thu, 01 Jan 1970/,
  );
  expect((await sessionOf(member)).status).toBe(401);
});

test("a role change ends the member's sessions, and the new role applies at their next sign-in", async () => {
  const member = await memberSession(gateway, program.programId, 'ADMIN');
  const changed = await api()
    .put('/api/v1/team/members')
    .set(memberWrite(gateway, owner))
    .send({ id: member.memberId, role: 'ANALYST' })
    .expect(200);
  expect(changed.body).toMatchObject({ id: member.memberId, role: 'ANALYST' });
  expect((await sessionOf(member)).status).toBe(401);
  const again = await signIn({ email: member.email, password: member.password }).expect(200);
  expect(again.body.member.role).toBe('ANALYST');
  expect(again.body.allowedOperations).not.toContain('updateAffiliate');
  expect(again.body.allowedOperations).toContain('getAffiliates');
});

test('removing a member ends their sessions and they can no longer sign in', async () => {
  const member = await memberSession(gateway, program.programId, 'FINANCE');
  await api()
    .delete('/api/v1/team/members')
    .set(memberWrite(gateway, owner))
    .send({ id: member.memberId })
    .expect(200, { id: member.memberId, deleted: true });
  expect((await sessionOf(member)).status).toBe(401);
  expect((await signIn({ email: member.email, password: member.password })).status).toBe(401);
  expect((await membersOf(owner)).members.map((listed) => listed.id)).not.toContain(member.memberId);
});

test('the last OWNER can be neither demoted nor removed (409 last_owner); with a second OWNER, one may go', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const only = await memberSession(gateway, programId, 'OWNER');
  for (const attempt of [
    api().put('/api/v1/team/members').set(memberWrite(gateway, only)).send({ id: only.memberId, role: 'ADMIN' }),
    api().delete('/api/v1/team/members').set(memberWrite(gateway, only)).send({ id: only.memberId }),
  ]) {
    const refused = await attempt;
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 409, code: 'last_owner' });
  }
  expect((await membersOf(only)).members).toEqual([expect.objectContaining({ id: only.memberId, role: 'OWNER' })]);
  expect((await sessionOf(only)).status).toBe(200);
  const second = await memberSession(gateway, programId, 'OWNER');
  await api().put('/api/v1/team/members').set(memberWrite(gateway, second)).send({ id: only.memberId, role: 'ADMIN' }).expect(200);
  const refused = await api().delete('/api/v1/team/members').set(memberWrite(gateway, second)).send({ id: second.memberId });
  expect(refused.body.code).toBe('last_owner');
});

/**
 * The app's codes of three consecutive time steps (the one before now, now's, the next), each accepted
 * while the server's clock is within a step of it. A code works once, so each act takes the next one.
 * Started early in a step, so that the first is still accepted when it arrives on a slow machine.
 */
async function totpCodes(secret: string): Promise<{ app: TOTP; previous: string; current: string; next: string }> {
  await eventually(() => expect(Date.now() % 30_000).toBeLessThan(15_000), 20_000);
  const app = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  const now = Date.now();
  const at = (offset: number) => app.generate({ timestamp: now + offset });
  return { app, previous: at(-30_000), current: at(0), next: at(30_000) };
}

test('TOTP: enrolled and confirmed with the app’s code, sign-in then needs a right code, and turning it off needs one too', async () => {
  const member = await memberSession(gateway, program.programId, 'ADMIN');
  const enrolment = await api().post('/api/v1/team/totp').set(memberWrite(gateway, member)).expect(200);
  expect(enrolment.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/.*secret=[A-Z2-7]+.*&algorithm=SHA1&digits=6&period=30$/);
  const { app, ...codes } = await totpCodes(enrolment.body.secret);
  // Until confirmed, sign-in does not ask for a code.
  expect((await signIn({ email: member.email, password: member.password })).status).toBe(200);
  const wrongCode = String((Number(app.generate()) + 500_000) % 1_000_000).padStart(6, '0');
  const unconfirmed = await api().put('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: wrongCode });
  expect({ status: unconfirmed.status, code: unconfirmed.body.code }).toEqual({ status: 400, code: 'totp_invalid' });
  await api().put('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: codes.previous }).expect(200, { totpEnabled: true });

  const without = await signIn({ email: member.email, password: member.password });
  expect({ status: without.status, code: without.body.code }).toEqual({ status: 401, code: 'totp_required' });
  const wrong = await signIn({ email: member.email, password: member.password, totpCode: wrongCode });
  expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 401, code: 'totp_invalid' });
  const right = await signIn({ email: member.email, password: member.password, totpCode: codes.current });
  expect(right.status).toBe(200);
  expect(right.body.member.totpEnabled).toBe(true);

  await api().delete('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: wrongCode }).expect(400);
  await api().delete('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: codes.next }).expect(200, { totpEnabled: false });
  expect((await signIn({ email: member.email, password: member.password })).status).toBe(200);
});

test('only an OWNER manages members and keys: ADMIN, FINANCE and ANALYST are refused 403 role_forbidden, and may still read the team', async () => {
  for (const role of ['ADMIN', 'FINANCE', 'ANALYST'] as const) {
    const member = await memberSession(gateway, program.programId, role);
    const attempts = [
      api()
        .post('/api/v1/team/members')
        .set(memberWrite(gateway, member))
        .send({ email: `by-${role}@example.com`, role: 'OWNER' }),
      api().put('/api/v1/team/members').set(memberWrite(gateway, member)).send({ id: member.memberId, role: 'OWNER' }),
      api().delete('/api/v1/team/members').set(memberWrite(gateway, member)).send({ id: owner.memberId }),
      api().get('/api/v1/api-keys').set('cookie', member.cookie),
      api().post('/api/v1/api-keys').set(memberWrite(gateway, member)).send({}),
      api().delete('/api/v1/api-keys').set(memberWrite(gateway, member)).send({ id: program.keyId }),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect({ role, status: answer.status, code: answer.body.code }).toEqual({ role, status: 403, code: 'role_forbidden' });
      expect(answer.body.error).toMatch(new RegExp(`^Your role ${role} cannot (GET|POST|PUT|DELETE) /api/v1/`));
    }
    expect((await membersOf(member)).members.map((listed) => listed.id)).toContain(owner.memberId);
    expect((await sessionOf(member)).body.allowedOperations).not.toContain('inviteTeamMember');
  }
  await api().get(`/api/v1/program`).set(bearer(program.key)).expect(200);
  expect((await membersOf(owner)).members.find((listed) => listed.id === owner.memberId)?.role).toBe('OWNER');
});

test('a write without the X-CSRF-Token, or from another origin, is refused 403 and changes nothing', async () => {
  const email = `csrf-${Date.now()}@example.com`;
  const { 'x-csrf-token': csrfToken, ...noToken } = memberWrite(gateway, owner);
  expect(csrfToken).toBe(owner.csrfToken);
  const attempts = [
    { headers: noToken, code: 'csrf_token_invalid' },
    { headers: { ...memberWrite(gateway, owner), 'x-csrf-token': 'x'.repeat(43) }, code: 'csrf_token_invalid' },
    { headers: { ...memberWrite(gateway, owner), origin: 'https://evil.example' }, code: 'origin_not_allowed' },
    { headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrfToken }, code: 'origin_not_allowed' },
  ];
  for (const { headers, code } of attempts) {
    const invite = await api().post('/api/v1/team/members').set(headers).send({ email, role: 'ADMIN' });
    expect({ status: invite.status, code: invite.body.code }).toEqual({ status: 403, code });
    const out = await api().delete('/api/v1/team/session').set(headers);
    expect({ status: out.status, code: out.body.code }).toEqual({ status: 403, code });
  }
  expect((await membersOf(owner)).invites.map((invite) => invite.email)).not.toContain(email);
  expect((await sessionOf(owner)).status).toBe(200);
});

test("an OWNER's session creates an API key that works on the API, and revoking it stops it", async () => {
  const created = await api()
    .post('/api/v1/api-keys')
    .set(memberWrite(gateway, owner))
    .send({ scopes: ['read'] })
    .expect(200);
  expect(created.headers['cache-control']).toBe('no-store');
  expect(created.body).toMatchObject({ programId: program.programId, scopes: ['read'], key: expect.stringMatching(/^ak_live_/) });
  const own = await api().get('/api/v1/program').set(bearer(created.body.key)).expect(200);
  expect(own.body.id).toBe(program.programId);
  const listed = await api().get('/api/v1/api-keys').set('cookie', owner.cookie).expect(200);
  expect(listed.body.map((key: { id: string }) => key.id)).toEqual(expect.arrayContaining([created.body.id, program.keyId]));
  expect(JSON.stringify(listed.body)).not.toContain(created.body.key);

  await api()
    .delete('/api/v1/api-keys')
    .set(memberWrite(gateway, owner))
    .send({ id: created.body.id })
    .expect(200, { id: created.body.id, revoked: true });
  await eventually(async () => expect((await api().get('/api/v1/program').set(bearer(created.body.key))).status).toBe(401));
});

test('an API key on the team routes is refused 403 team_session_required, and nothing changes', async () => {
  const teamOperations = API_OPERATIONS.filter((operation) => operation.team);
  expect(teamOperations.length).toBeGreaterThanOrEqual(14);
  for (const operation of teamOperations) {
    const answer = await api()
      [operation.method as 'get' | 'post' | 'put' | 'delete'](`/api/v1${operation.path}`)
      .set(bearer(program.key))
      .send(operation.method === 'get' ? undefined : { email: owner.email, password: owner.password, id: owner.memberId, role: 'ANALYST' });
    const route = `${operation.method} ${operation.path}`;
    expect({ route, status: answer.status, code: answer.body.code }).toEqual({ route, status: 403, code: 'team_session_required' });
  }
  expect((await membersOf(owner)).members.find((listed) => listed.id === owner.memberId)?.role).toBe('OWNER');
});

test("every team write is in the program's audit record under the member who made it, refusals of the role included", async () => {
  const analyst = await memberSession(gateway, program.programId, 'ANALYST');
  await api()
    .post('/api/v1/team/members')
    .set(memberWrite(gateway, owner))
    .send({ email: `audited-${Date.now()}@example.com`, role: 'FINANCE' })
    .expect(200);
  await api()
    .post('/api/v1/team/members')
    .set(memberWrite(gateway, analyst))
    .send({ email: `refused-${Date.now()}@example.com`, role: 'OWNER' })
    .expect(403);
  const key = await api().post('/api/v1/api-keys').set(memberWrite(gateway, owner)).send({}).expect(200);
  await api().delete('/api/v1/api-keys').set(memberWrite(gateway, owner)).send({ id: key.body.id }).expect(200);
  const records = await eventually(async () => {
    const answer = await api().get('/api/v1/audit-records?limit=100').set(bearer(program.key)).expect(200);
    expect(answer.body.filter((record: { action: string }) => record.action.startsWith('api_key.')).length).toBeGreaterThanOrEqual(2);
    return answer.body as Array<{ actor: Record<string, string>; action: string; operation: string; status: number }>;
  });
  const ownerActor = { memberId: owner.memberId, email: owner.email };
  expect(records).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ actor: ownerActor, action: 'team.member_invited', operation: 'POST /api/v1/team/members', status: 200 }),
      expect.objectContaining({ actor: { memberId: analyst.memberId, email: analyst.email }, action: 'team.member_invited', status: 403 }),
      expect.objectContaining({ actor: ownerActor, action: 'api_key.created', operation: 'POST /api/v1/api-keys', status: 200 }),
      expect.objectContaining({ actor: ownerActor, action: 'api_key.revoked', operation: 'DELETE /api/v1/api-keys', status: 200 }),
    ]),
  );
});

test("a member of program A can neither see nor change program B's team or keys", async () => {
  const programB = await createProgramWithKey(gateway);
  const ownerB = await memberSession(gateway, programB.programId, 'OWNER');
  const analystB = await memberSession(gateway, programB.programId, 'ANALYST');
  expect((await membersOf(owner)).members.map((member) => member.id)).not.toContain(ownerB.memberId);
  const attempts = [
    api().put('/api/v1/team/members').set(memberWrite(gateway, owner)).send({ id: analystB.memberId, role: 'OWNER' }),
    api().delete('/api/v1/team/members').set(memberWrite(gateway, owner)).send({ id: analystB.memberId }),
    api().delete('/api/v1/api-keys').set(memberWrite(gateway, owner)).send({ id: programB.keyId }),
  ];
  for (const answer of await Promise.all(attempts))
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 404, code: 'resource_missing' });
  expect((await sessionOf(analystB)).body.member.role).toBe('ANALYST');
  await api().get('/api/v1/program').set(bearer(programB.key)).expect(200);
});

test('without a session the team routes answer 401, and an email can be a member once', async () => {
  const none = await api().get('/api/v1/team/members');
  expect({ status: none.status, code: none.body.code }).toEqual({ status: 401, code: 'unauthenticated' });
  const bogus = await api()
    .get('/api/v1/team/members')
    .set('cookie', `__Host-affiliate_console_session=${owner.cookie.split('=')[1]?.slice(0, 37)}${'A'.repeat(43)}`);
  expect(bogus.status).toBe(401);
  const again = await api()
    .post(`/admin/v1/programs/${program.programId}/members`)
    .set(adminAuth)
    .send({ email: owner.email, role: 'ADMIN' });
  expect({ status: again.status, code: again.body.code }).toEqual({ status: 409, code: 'member_exists' });
});

test("the admin CLI's invite-member prints a single-use link that makes the program's OWNER, and list-members shows them", async () => {
  const { programId } = await createProgramWithKey(gateway);
  const team = new TeamAccounts(gateway.connection, new TeamSessions(gateway.connection));
  const printed = (await runAdminCommand(
    ['invite-member', '--program', programId, '--email', 'cli-owner@example.com', '--role', 'OWNER', '--gateway-url', gateway.url],
    gateway.store,
    team,
  )) as { inviteUrl: string; invite: { email: string; role: string } };
  expect(printed.invite).toMatchObject({ email: 'cli-owner@example.com', role: 'OWNER' });
  const accepted = await api()
    .post('/api/v1/team/invites/accept')
    .send({ token: tokenOf(printed.inviteUrl), password: memberPassword() })
    .expect(200);
  expect(accepted.body.program.id).toBe(programId);
  expect(await runAdminCommand(['list-members', '--program', programId], gateway.store, team)).toEqual({
    members: [accepted.body.member],
    invites: [],
  });
  await expect(
    runAdminCommand(['invite-member', '--program', programId, '--email', 'not-an-email', '--role', 'OWNER'], gateway.store, team),
  ).rejects.toThrow(/email/);
  await expect(
    runAdminCommand(['invite-member', '--program', programId, '--email', 'x@example.com', '--role', 'KING'], gateway.store, team),
  ).rejects.toThrow(/role/);
});

test('the login throttle counts each attempt before its password is checked: a burst of 30 parallel wrong sign-ins for one account gets at most the account limit of 401s, the rest 429 with Retry-After, and then the right password 429', async () => {
  const member = await memberSession(gateway, program.programId, 'ANALYST');
  // Each attempt from its own address, so that only the account's limit applies.
  const burst = await Promise.all(
    Array.from({ length: 30 }, (_, index) => signIn({ email: member.email, password: memberPassword() }, `198.18.7.${index + 1}`)),
  );
  const statuses = burst.map((answer) => answer.status);
  expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(LOGIN_LIMITS.account.points);
  expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  for (const answer of burst.filter((each) => each.status === 429)) {
    expect(answer.body.code).toBe('login_throttled');
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
  }
  const right = await signIn({ email: member.email, password: member.password }, '198.18.7.100');
  expect({ status: right.status, code: right.body.code }).toEqual({ status: 429, code: 'login_throttled' });
  expect(right.headers['set-cookie']).toBeUndefined();
});

test('a right sign-in gives its points back: signing in more often than the limit, with the right password, is never throttled', async () => {
  const member = await memberSession(gateway, program.programId, 'ANALYST');
  const address = '198.18.8.1';
  for (let attempt = 0; attempt <= LOGIN_LIMITS.address.points; attempt++)
    expect((await signIn({ email: member.email, password: member.password }, address)).status).toBe(200);
});

test('while TOTP is on, a new enrolment is refused 409 totp_enabled (a session alone cannot replace the factor), and the factor stays', async () => {
  const member = await memberSession(gateway, program.programId, 'ADMIN');
  const enrolment = await api().post('/api/v1/team/totp').set(memberWrite(gateway, member)).expect(200);
  const codes = await totpCodes(enrolment.body.secret);
  await api().put('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: codes.previous }).expect(200);
  for (const attempt of [
    api().post('/api/v1/team/totp').set(memberWrite(gateway, member)),
    api().put('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: codes.current }),
  ]) {
    const refused = await attempt;
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 409, code: 'totp_enabled' });
  }
  // The original factor still signs in; nothing replaced it.
  const right = await signIn({ email: member.email, password: member.password, totpCode: codes.current });
  expect(right.status).toBe(200);
  expect(right.body.member.totpEnabled).toBe(true);
});

test('a TOTP code works once (RFC 6238 §5.2): the code of a step already accepted, or of an earlier step, is refused 401 totp_invalid', async () => {
  const member = await memberSession(gateway, program.programId, 'FINANCE');
  const enrolment = await api().post('/api/v1/team/totp').set(memberWrite(gateway, member)).expect(200);
  const codes = await totpCodes(enrolment.body.secret);
  // The code that confirmed is spent.
  await api().put('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: codes.previous }).expect(200);
  const credentials = { email: member.email, password: member.password };
  const replayedConfirm = await signIn({ ...credentials, totpCode: codes.previous });
  expect({ status: replayedConfirm.status, code: replayedConfirm.body.code }).toEqual({ status: 401, code: 'totp_invalid' });
  // Two sign-ins with the same code at once: one gets in, the other is refused.
  const both = await Promise.all([0, 1].map(() => signIn({ ...credentials, totpCode: codes.next })));
  expect(both.map((answer) => answer.status).sort()).toEqual([200, 401]);
  // An earlier step than the last accepted is refused too.
  const earlier = await signIn({ ...credentials, totpCode: codes.current });
  expect({ status: earlier.status, code: earlier.body.code }).toEqual({ status: 401, code: 'totp_invalid' });
  const off = await api().delete('/api/v1/team/totp').set(memberWrite(gateway, member)).send({ code: codes.next });
  expect({ status: off.status, code: off.body.code }).toEqual({ status: 400, code: 'totp_invalid' });
});

test("an OWNER inviting an address that is another program's member gets the same answer as for a fresh address; the acceptance is refused 409 member_exists", async () => {
  const programB = await createProgramWithKey(gateway);
  const memberB = await memberSession(gateway, programB.programId, 'ANALYST');
  const invite = (email: string) => api().post('/api/v1/team/members').set(memberWrite(gateway, owner)).send({ email, role: 'ADMIN' });
  const fresh = await invite(`fresh-${Date.now()}@example.com`);
  const taken = await invite(memberB.email);
  const shape = (answer: request.Response) => ({
    status: answer.status,
    keys: Object.keys(answer.body).sort(),
    invite: Object.keys(answer.body.invite ?? {}).sort(),
  });
  expect(shape(taken)).toEqual(shape(fresh));
  expect(taken.status).toBe(200);
  // The person who owns the address learns it when accepting; the link is not spent and B's member is untouched.
  const accepted = await api()
    .post('/api/v1/team/invites/accept')
    .send({ token: tokenOf(taken.body.inviteUrl), password: memberPassword() });
  expect({ status: accepted.status, code: accepted.body.code }).toEqual({ status: 409, code: 'member_exists' });
  expect(accepted.headers['set-cookie']).toBeUndefined();
  expect((await sessionOf(memberB)).body.program.id).toBe(programB.programId);
  expect((await membersOf(owner)).members.map((member) => member.email)).not.toContain(memberB.email);
});

test("deleting a program ends its members' sessions, withdraws its invites and frees its members' addresses for another program", async () => {
  const doomed = await createProgramWithKey(gateway);
  const member = await memberSession(gateway, doomed.programId, 'OWNER');
  const pending = await adminInvite(doomed.programId, `pending-${Date.now()}@example.com`, 'ANALYST');
  await api().delete(`/admin/v1/programs/${doomed.programId}`).set(adminAuth).expect(200);
  expect((await sessionOf(member)).status).toBe(401);
  expect((await signIn({ email: member.email, password: member.password })).status).toBe(401);
  const late = await api().post('/api/v1/team/invites/accept').send({ token: pending, password: memberPassword() });
  expect({ status: late.status, code: late.body.code }).toEqual({ status: 410, code: 'invite_revoked' });
  // The address joins another program's team.
  const rejoined = await api()
    .post('/api/v1/team/invites/accept')
    .send({ token: await adminInvite(program.programId, member.email, 'ANALYST'), password: memberPassword() });
  expect(rejoined.status).toBe(200);
  expect(rejoined.body.program.id).toBe(program.programId);
});

test("with the program's API access off, the whole console stops: the team routes and sign-in answer 403 api_access_disabled, as /api/v1 does", async () => {
  const off = await createProgramWithKey(gateway);
  const member = await memberSession(gateway, off.programId, 'OWNER');
  const pending = await adminInvite(off.programId, `waiting-${Date.now()}@example.com`, 'ANALYST');
  await api().put(`/admin/v1/programs/${off.programId}`).set(adminAuth).send({ apiAccess: false }).expect(200);
  const attempts = [
    sessionOf(member),
    api().get('/api/v1/team/members').set('cookie', member.cookie),
    api().get('/api/v1/api-keys').set('cookie', member.cookie),
    api().post('/api/v1/team/members').set(memberWrite(gateway, member)).send({ email: 'x@example.com', role: 'ADMIN' }),
    api().post('/api/v1/api-keys').set(memberWrite(gateway, member)).send({}),
    api().post('/api/v1/team/totp').set(memberWrite(gateway, member)),
    signIn({ email: member.email, password: member.password }),
    api().post('/api/v1/team/invites/accept').send({ token: pending, password: memberPassword() }),
    api().get('/api/v1/program').set('cookie', member.cookie),
  ];
  for (const answer of await Promise.all(attempts))
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 403, code: 'api_access_disabled' });
  // Nothing was made meanwhile: back on, the invite still works once.
  await api().put(`/admin/v1/programs/${off.programId}`).set(adminAuth).send({ apiAccess: true }).expect(200);
  await api().post('/api/v1/team/invites/accept').send({ token: pending, password: memberPassword() }).expect(200);
  expect((await api().get('/api/v1/api-keys').set('cookie', member.cookie).expect(200)).body).toHaveLength(1);
});

test("accepting an invite, starting TOTP enrolment and a team write refused for CSRF are each in the program's audit record under the member", async () => {
  const audited = await createProgramWithKey(gateway);
  const member = await memberSession(gateway, audited.programId, 'OWNER');
  await api().post('/api/v1/team/totp').set(memberWrite(gateway, member)).expect(200);
  const { 'x-csrf-token': _token, ...forged } = memberWrite(gateway, member);
  await api().post('/api/v1/team/members').set(forged).send({ email: 'forged@example.com', role: 'OWNER' }).expect(403);
  await api().delete('/api/v1/team/session').set(forged).expect(403);
  const actor = { memberId: member.memberId, email: member.email };
  await eventually(async () => {
    const records = (await api().get('/api/v1/audit-records?limit=100').set(bearer(audited.key)).expect(200)).body;
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ actor, action: 'team.member_joined', operation: 'POST /api/v1/team/invites/accept', status: 200 }),
        expect.objectContaining({ actor, action: 'team.totp_changed', operation: 'POST /api/v1/team/totp', status: 200 }),
        expect.objectContaining({ actor, action: 'team.member_invited', operation: 'POST /api/v1/team/members', status: 403 }),
        expect.objectContaining({ actor, action: 'member.change', operation: 'DELETE /api/v1/team/session', status: 403 }),
      ]),
    );
  });
});

test('a withdrawn invite is refused 410 invite_revoked, saying it was withdrawn, not used', async () => {
  const email = `withdrawn-${Date.now()}@example.com`;
  const first = await adminInvite(program.programId, email, 'ANALYST');
  // A newer invite for the address withdraws the first; the OWNER then withdraws the newer one.
  const second = await adminInvite(program.programId, email, 'ANALYST');
  await api()
    .delete('/api/v1/team/members')
    .set(memberWrite(gateway, owner))
    .send({ id: second.split('.')[0] })
    .expect(200);
  for (const token of [first, second]) {
    const refused = await api().post('/api/v1/team/invites/accept').send({ token, password: memberPassword() });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 410, code: 'invite_revoked' });
    expect(refused.body.error).toMatch(/withdrawn/);
  }
  expect((await membersOf(owner)).members.map((member) => member.email)).not.toContain(email);
});
