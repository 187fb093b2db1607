import { API_OPERATIONS, roleAllows, scopesOf, TEAM_ROLES, type ApiOperation } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import request from 'supertest';
import type { RunningGateway } from '../src/gateway';
import { ROUTE_TABLE } from '../src/proxy/route-table';
import {
  adminAuth,
  allUpstreams,
  bearer,
  createProgramWithKey,
  memberSession,
  memberWrite,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type MemberSession,
} from './support';

let upstream: EchoUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  gateway = await startGateway({ upstreams: allUpstreams(upstream.url) });
});

afterAll(async () => {
  await gateway.stop();
  await upstream.stop();
});

const api = () => request(gateway.url);
type Method = 'get' | 'post' | 'put' | 'delete';

/** Every public operation a member's session may be judged on (the team's own routes are their own walk). */
const PUBLIC_OPERATIONS = API_OPERATIONS.filter((operation) => !operation.admin && !operation.browser && !operation.team);
const isWrite = (operation: ApiOperation) => operation.method !== 'get';
const routeOf = (operation: ApiOperation) => `${operation.method.toUpperCase()} /api/v1${operation.path}`;
const forwarded = (since: number) => upstream.received.slice(since).filter((received) => received.url !== '/healthz');
const segmentRouted = (operation: ApiOperation) => Object.hasOwn(ROUTE_TABLE, operation.path.split('/')[1] ?? '');

/** The request as the console's page sends it: the cookie always, the CSRF token and the gateway's Origin on a write. */
function asMember(member: MemberSession, operation: ApiOperation, headers: Record<string, string> = memberWrite(gateway, member)) {
  const call = api()[operation.method as Method](`/api/v1${operation.path}`).set('cookie', member.cookie);
  if (!isWrite(operation)) return call;
  return call.set(headers).send({});
}

test('every role against every public operation: answered exactly when roleAllows says so, otherwise 403 role_forbidden naming the role and the operation, and nothing refused reaches a service', async () => {
  const { programId } = await createProgramWithKey(gateway);
  expect(PUBLIC_OPERATIONS.length).toBeGreaterThan(40);
  for (const role of TEAM_ROLES) {
    const member = await memberSession(gateway, programId, role);
    for (const operation of PUBLIC_OPERATIONS) {
      const route = `${routeOf(operation)} as ${role}`;
      const before = upstream.received.length;
      const response = await asMember(member, operation);
      if (roleAllows(role, { operationId: operation.operationId, scopes: scopesOf(operation) })) {
        expect({ route, refused: response.status === 403 || response.status === 401 }).toEqual({ route, refused: false });
        if (segmentRouted(operation)) expect({ route, forwarded: forwarded(before).length }).toEqual({ route, forwarded: 1 });
      } else {
        // DELETE /coupons and PUT /referrals number their errors (spec): the text is then in `message`.
        const message = String(response.body.message ?? response.body.error);
        expect({ route, status: response.status, code: response.body.code, message }).toEqual({
          route,
          status: 403,
          code: 'role_forbidden',
          message: `Your role ${role} cannot ${routeOf(operation)}`,
        });
        expect({ route, forwarded: forwarded(before) }).toEqual({ route, forwarded: [] });
      }
    }
  }
});

test('ANALYST changes nothing through the API: every operation that changes something (needs more than "read") is refused 403 and reaches no service', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const analyst = await memberSession(gateway, programId, 'ANALYST');
  const changes = PUBLIC_OPERATIONS.filter((operation) => scopesOf(operation).some((scope) => scope !== 'read'));
  // The one POST that is a read by the scope table: checking a received webhook against the endpoint (it reveals and changes nothing).
  expect(PUBLIC_OPERATIONS.filter((operation) => isWrite(operation) && !changes.includes(operation)).map(routeOf)).toEqual([
    'POST /api/v1/webhook-endpoints/verify',
  ]);
  expect(changes.length).toBeGreaterThan(20);
  const before = upstream.received.length;
  for (const operation of changes) {
    const response = await asMember(analyst, operation);
    expect({ route: routeOf(operation), status: response.status }).toEqual({ route: routeOf(operation), status: 403 });
  }
  expect(forwarded(before)).toEqual([]);
  // Nothing of the program's own settings changed either (they are the gateway's, never forwarded).
  const keys = await api().get('/api/v1/publishable-keys').set('cookie', analyst.cookie).expect(200);
  expect(keys.body).toEqual([]);
});

test('FINANCE can run a payout, mark it paid and decide the review queue, but DELETE /commission-plans answers 403 role_forbidden', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const finance = await memberSession(gateway, programId, 'FINANCE');
  const headers = memberWrite(gateway, finance);
  await api().post('/api/v1/payouts').set(headers).send({}).expect(200);
  await api().put('/api/v1/payouts').set(headers).send({ payoutId: '00000000-0000-4000-8000-000000000001', status: 'PAID' }).expect(200);
  await api().post('/api/v1/commissions/release').set(headers).send({}).expect(200);
  const refused = await api().delete('/api/v1/commission-plans').set(headers).send({ id: '00000000-0000-4000-8000-000000000002' });
  expect({ status: refused.status, code: refused.body.code, error: refused.body.error }).toEqual({
    status: 403,
    code: 'role_forbidden',
    error: 'Your role FINANCE cannot DELETE /api/v1/commission-plans',
  });
});

test('a method and path no operation has is answered 404 route_missing to every role, OWNER included, and the browser routes take no console session', async () => {
  const { programId } = await createProgramWithKey(gateway);
  const owner = await memberSession(gateway, programId, 'OWNER');
  const before = upstream.received.length;
  for (const [method, path] of [
    ['get', '/api/v1/coupons/unknown-thing'],
    ['post', '/api/v1/event-types'],
    ['delete', '/api/v1/webhook-deliveries'],
  ] as Array<[Method, string]>) {
    const response = await api()[method](path).set('cookie', owner.cookie).set(memberWrite(gateway, owner));
    expect({ path, status: response.status, code: response.body.code }).toEqual({ path, status: 404, code: 'route_missing' });
  }
  for (const path of ['/api/v1/browser/clicks', '/api/v1/browser/referrals']) {
    const response = await api().post(path).set('cookie', owner.cookie).set(memberWrite(gateway, owner)).send({});
    expect({ path, status: response.status, code: response.body.code }).toEqual({ path, status: 403, code: 'key_type_not_allowed' });
  }
  expect(forwarded(before)).toEqual([]);
});

test("a member write without X-CSRF-Token, with another session's token, from a foreign Origin or without Origin is refused 403 and reaches no service; a read needs neither", async () => {
  const { programId } = await createProgramWithKey(gateway);
  const owner = await memberSession(gateway, programId, 'OWNER');
  const other = await memberSession(gateway, programId, 'OWNER');
  const forged: Array<{ name: string; headers: Record<string, string>; code: string }> = [
    { name: 'no X-CSRF-Token', headers: { origin: gateway.url }, code: 'csrf_token_invalid' },
    { name: "another session's token", headers: { origin: gateway.url, 'x-csrf-token': other.csrfToken }, code: 'csrf_token_invalid' },
    { name: 'a foreign Origin', headers: { origin: 'https://evil.example', 'x-csrf-token': owner.csrfToken }, code: 'origin_not_allowed' },
    { name: 'no Origin', headers: { 'x-csrf-token': owner.csrfToken }, code: 'origin_not_allowed' },
  ];
  const writes = PUBLIC_OPERATIONS.filter(isWrite);
  const before = upstream.received.length;
  for (const operation of writes) {
    for (const attempt of forged) {
      const route = `${routeOf(operation)} with ${attempt.name}`;
      const response = await asMember(owner, operation, attempt.headers);
      expect({ route, status: response.status, code: response.body.code }).toEqual({ route, status: 403, code: attempt.code });
    }
  }
  expect(forwarded(before)).toEqual([]);
  expect((await api().get('/api/v1/publishable-keys').set('cookie', owner.cookie).expect(200)).body).toEqual([]);
  // A read without token or Origin is answered, and reaches its service.
  const reading = upstream.received.length;
  await api().get('/api/v1/coupons').set('cookie', owner.cookie).expect(200);
  expect(forwarded(reading)).toHaveLength(1);
});

type AuditRecord = { action: string; operation: string; status: number; actor: { memberId: string; email: string } };

test("each member write is in the program's audit record under the member's id and email, with its operation and status, refusals included; reads are not", async () => {
  const { programId, key } = await createProgramWithKey(gateway);
  const admin = await memberSession(gateway, programId, 'ADMIN');
  const analyst = await memberSession(gateway, programId, 'ANALYST');
  const writes = PUBLIC_OPERATIONS.filter(isWrite);
  const made: Array<{ operation: string; status: number; memberId: string }> = [];
  for (const operation of writes) {
    const response = await asMember(admin, operation);
    made.push({ operation: routeOf(operation), status: response.status, memberId: admin.memberId });
  }
  await api().get('/api/v1/coupons').set('cookie', admin.cookie).expect(200);
  const refused = await api().post('/api/v1/coupons').set('cookie', analyst.cookie).set(memberWrite(gateway, analyst)).send({});
  expect(refused.status).toBe(403);
  made.push({ operation: 'POST /api/v1/coupons', status: 403, memberId: analyst.memberId });
  const forged = await api().post('/api/v1/coupons').set('cookie', analyst.cookie).set('origin', gateway.url).send({});
  expect(forged.status).toBe(403);
  made.push({ operation: 'POST /api/v1/coupons', status: 403, memberId: analyst.memberId });

  const records = await eventually(async () => {
    const all: AuditRecord[] = [];
    let path: string | undefined = '/api/v1/audit-records?limit=100';
    while (path) {
      const page: request.Response = await api().get(path).set(bearer(key)).expect(200);
      // The two members' acceptances of their invites are recorded too (team.member_joined); this test is about their writes.
      all.push(...(page.body as AuditRecord[]).filter((record) => record.action !== 'team.member_joined'));
      path = /<([^>]+)>; rel="next"/.exec(String(page.headers.link ?? ''))?.[1];
    }
    expect(all).toHaveLength(made.length);
    return all;
  });
  const emails: Record<string, string> = { [admin.memberId]: admin.email, [analyst.memberId]: analyst.email };
  expect(
    records
      .map((record) => ({ operation: record.operation, status: record.status, memberId: record.actor.memberId }))
      .sort((a, b) => `${a.operation}${a.memberId}`.localeCompare(`${b.operation}${b.memberId}`)),
  ).toEqual([...made].sort((a, b) => `${a.operation}${a.memberId}`.localeCompare(`${b.operation}${b.memberId}`)));
  for (const record of records) {
    expect(record.actor).toEqual({ memberId: record.actor.memberId, email: emails[record.actor.memberId] });
    // A sensitive act keeps its own name; any other change is a member's change.
    expect(['member.change', 'payout.status_changed', 'webhook_secret.revealed', 'bank_details.changed']).toContain(record.action);
  }
  expect(records.find((record) => record.operation === 'PUT /api/v1/payouts')?.action).toBe('payout.status_changed');
  expect(records.find((record) => record.operation === 'POST /api/v1/coupons' && record.status !== 403)?.action).toBe('member.change');
});

test('the services learn which member decided: the forwarded key headers carry the member id (mbr_…) and email, and an Authorization header always wins over the cookie', async () => {
  const { programId, key, keyId } = await createProgramWithKey(gateway);
  const other = await createProgramWithKey(gateway);
  const finance = await memberSession(gateway, programId, 'FINANCE');
  const before = upstream.received.length;
  await api().post('/api/v1/commissions/release').set('cookie', finance.cookie).set(memberWrite(gateway, finance)).send({}).expect(200);
  const [release] = forwarded(before);
  expect(release?.headers).toMatchObject({
    'x-program-id': programId,
    'x-api-key-id': finance.memberId,
    'x-api-key-prefix': finance.email,
  });
  expect(finance.memberId).toMatch(/^mbr_/);

  // The key of another program with this program's member cookie: the key's program, judged as the key.
  const keyed = upstream.received.length;
  await api().get('/api/v1/coupons').set(bearer(other.key)).set('cookie', finance.cookie).expect(200);
  expect(forwarded(keyed)[0]?.headers).toMatchObject({ 'x-program-id': other.programId, 'x-api-key-id': other.keyId });
  // A write with a key needs no CSRF token even when a cookie rides along.
  await api().post('/api/v1/coupons').set(bearer(key)).set('cookie', finance.cookie).send({}).expect(200);
  expect(forwarded(keyed)[1]?.headers).toMatchObject({ 'x-program-id': programId, 'x-api-key-id': keyId });
});

test("a signed-out, removed member's, idle-expired or made-up session gets 401 on every public route and reaches no service", async () => {
  const { programId, key } = await createProgramWithKey(gateway);
  const signedOut = await memberSession(gateway, programId, 'OWNER');
  await api().delete('/api/v1/team/session').set(memberWrite(gateway, signedOut)).expect(200);
  const removed = await memberSession(gateway, programId, 'ADMIN');
  const remover = await memberSession(gateway, programId, 'OWNER');
  await api().delete('/api/v1/team/members').set(memberWrite(gateway, remover)).send({ id: removed.memberId }).expect(200);
  const expired = await memberSession(gateway, programId, 'FINANCE');
  await gateway.connection
    .collection('team_sessions')
    .updateMany({ memberId: expired.memberId }, { $set: { idleExpiresAt: new Date(Date.now() - 1000) } });
  const made = { cookie: `${signedOut.cookie.split('=')[0]}=00000000-0000-4000-8000-000000000000.made-up`, csrfToken: 'made-up' };

  const before = upstream.received.length;
  for (const session of [signedOut, removed, expired, made]) {
    for (const operation of PUBLIC_OPERATIONS) {
      const response = await api()
        [operation.method as Method](`/api/v1${operation.path}`)
        .set('cookie', session.cookie)
        .set({ origin: gateway.url, 'x-csrf-token': session.csrfToken });
      expect({ route: routeOf(operation), status: response.status }).toEqual({ route: routeOf(operation), status: 401 });
    }
  }
  expect(forwarded(before)).toEqual([]);
  // The program's key still works exactly as before.
  await api().get('/api/v1/coupons').set(bearer(key)).expect(200);
});

test("a session's program follows its keys' rules: API access off is 403 api_access_disabled, a deleted program 404 program_missing", async () => {
  const { programId } = await createProgramWithKey(gateway);
  const owner = await memberSession(gateway, programId, 'OWNER');
  await api().get('/api/v1/coupons').set('cookie', owner.cookie).expect(200);
  await api().put(`/admin/v1/programs/${programId}`).set(adminAuth).send({ apiAccess: false }).expect(200);
  await eventually(async () => {
    const refused = await api().get('/api/v1/coupons').set('cookie', owner.cookie);
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'api_access_disabled' });
  });
  await api().delete(`/admin/v1/programs/${programId}`).set(adminAuth).expect(200);
  await eventually(async () => {
    const gone = await api().get('/api/v1/coupons').set('cookie', owner.cookie);
    expect({ status: gone.status, code: gone.body.code }).toEqual({ status: 404, code: 'program_missing' });
  });
});
