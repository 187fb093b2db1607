import { randomUUID } from 'node:crypto';
import { API_OPERATIONS, OPERATION_EXAMPLES, scopesOf, type TeamRole } from '@affiliate/contracts';
import { eventually } from '@affiliate/platform/testing';
import { apiClient, okBody as ok, type Api, type ApiResponse } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * Team members' console sessions on the whole public API (issue 32), against the real services: a
 * session reaches its own program only, whatever ids it sends, and each role does what its table
 * says, with the member named where the program records who decided and who changed what.
 */
const world = systemWithSubscriber();

/** Every public operation of a program's own (the team's routes take a session of their own and are walked by their tests). */
const PUBLIC_OPERATIONS = API_OPERATIONS.filter(
  (operation) => !operation.admin && !operation.browser && !operation.team && !operation.path.includes('{'),
);

type Member = { memberId: string; email: string; call: (method: string, path: string, body?: unknown) => Promise<ApiResponse> };

/** A member of the program signed in, calling the API as the console's page does: the cookie, and the CSRF token and Origin on a write. */
async function signedIn(programId: string, role: TeamRole): Promise<Member> {
  const session = await world.system.memberSession(programId, role);
  const api = apiClient(`${world.system.gatewayUrl}/api/v1`, undefined);
  return {
    memberId: session.memberId,
    email: session.email,
    call: (method, path, body) =>
      api.request(method, path, body, {
        cookie: session.cookie,
        ...(method === 'GET' ? {} : { origin: world.system.gatewayUrl, 'x-csrf-token': session.csrfToken }),
      }),
  };
}

type Ids = Record<string, string>;

/**
 * The operation's documented example (OPERATION_EXAMPLES: a valid request of each), its ids replaced
 * by `ids`: every field named like an id of one kind (couponId, affiliateIds, ...), and `id` by the
 * kind its path lists.
 */
function exampleWith(operation: (typeof PUBLIC_OPERATIONS)[number], ids: Ids): { path: string; body: unknown } {
  const example = OPERATION_EXAMPLES[operation.operationId];
  const idOfPath = ids[`id:${operation.path.split('/')[1]}`];
  const swap = (value: unknown, key?: string): unknown => {
    if (key === 'id' && idOfPath) return idOfPath;
    if (key && ids[key] !== undefined) return ids[key];
    if (key && key.endsWith('Ids') && ids[key.slice(0, -1)] !== undefined) return [ids[key.slice(0, -1)]];
    if (key === 'affiliateCouponIds') return [ids.couponId];
    if (Array.isArray(value)) return value.map((item) => swap(item));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, swap(item, name)]));
    return value;
  };
  const query = new URLSearchParams(
    Object.entries(swap(example?.query ?? {}) as Record<string, unknown>).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();
  return {
    path: `${operation.path}${query ? `?${query}` : ''}`,
    body: operation.method === 'get' ? undefined : (swap(example?.request) ?? {}),
  };
}

type AuditRecord = { action: string; operation: string; status: number; actor: Record<string, string> };

/**
 * The program's audit record once it holds `count` records of the members' acts (each is written after
 * its answer), as who did what and how it ended. The members' acceptances of their invites are recorded
 * too (team.member_joined); these tests are about what they did once in.
 */
async function auditRecords(read: () => Promise<ApiResponse>, count: number) {
  const records = await eventually(async () => {
    const listed = ((await ok(read())) as AuditRecord[]).filter((record) => record.action !== 'team.member_joined');
    expect(listed).toHaveLength(count);
    return listed;
  });
  return records.map(({ action, operation, status, actor }) => ({ action, operation, status, actor }));
}

/** What a program's key sees of its program: every list, as it is now. */
async function snapshot(api: Api): Promise<Record<string, unknown>> {
  const paths = [
    '/program',
    '/coupons',
    '/promotional-codes',
    '/affiliates',
    '/commission-plans',
    '/referrals',
    '/sales',
    '/commissions',
    '/payouts',
    '/webhook-endpoints',
    '/publishable-keys',
  ];
  return Object.fromEntries(await Promise.all(paths.map(async (path) => [path, await ok(api.get(path))])));
}

/** Program B's world, every object of it marked with a word that must never appear in an answer to program A. */
async function programWithEverything(): Promise<{ programId: string; api: Api; ids: Ids; marks: string[] }> {
  const { programId, api } = await world.system.createProgram();
  const mark = `bsecret${randomUUID().slice(0, 6)}`;
  const endpoint = await ok(
    api.post('/webhook-endpoints', { url: world.hooks, eventTypes: ['affiliate.created'], description: `${mark} hooks` }),
  );
  const plan = await ok(
    api.post('/commission-plans', {
      name: `${mark} plan`,
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  const affiliate = await ok(api.post('/affiliates', { firstName: 'Carl', lastName: `${mark}son`, email: `${mark}@b.example.com` }));
  const coupon = await ok(api.post('/coupons', { name: `${mark} coupon`, percentOff: 10 }));
  const code = await ok(
    api.post('/promotional-codes', { couponId: coupon.id, code: `${mark.toUpperCase()}10`, affiliateId: affiliate.id }),
  );
  const referral = await ok(api.post('/referrals', { affiliateId: affiliate.id, email: `${mark}-customer@b.example.com` }));
  const sale = await ok(api.post('/sales', { referralId: referral.id, totalEarned: 100 }));
  const [payout] = await ok(api.post('/payouts', {}));
  const publishableKey = await ok(api.post('/publishable-keys', {}));
  await eventually(() =>
    expect(world.subscriber.events('affiliate.created').map((delivery) => delivery.body.data.id)).toContain(affiliate.id),
  );
  const ids: Ids = {
    programId,
    affiliateId: affiliate.id,
    couponId: coupon.id,
    promotionalCodeId: code.id,
    referralId: referral.id,
    saleId: sale.id,
    commissionId: sale.commissions[0].id,
    payoutId: payout.id,
    webhookEndpointId: endpoint.id,
    endpointId: endpoint.id,
    commissionPlanId: plan.id,
    planId: plan.id,
    publishableKeyId: publishableKey.id,
    'id:coupons': coupon.id,
    'id:affiliates': affiliate.id,
    'id:commission-plans': plan.id,
    'id:promotional-codes': code.id,
    'id:referrals': referral.id,
    'id:sales': sale.id,
    'id:payouts': payout.id,
    'id:webhook-endpoints': endpoint.id,
  };
  return { programId, api, ids, marks: [mark, mark.toUpperCase(), publishableKey.key] };
}

test("a session of program A never reads or writes program B on any public operation: B's ids in its queries and bodies give refusals or empty answers, never B's data, and B is unchanged", async () => {
  const b = await programWithEverything();
  const a = await world.system.createProgram();
  const owner = await signedIn(a.programId, 'OWNER');
  const before = await snapshot(b.api);
  const deliveriesBefore = world.subscriber.deliveries.length;
  expect(PUBLIC_OPERATIONS.length).toBeGreaterThan(40);
  for (const operation of PUBLIC_OPERATIONS) {
    const route = `${operation.method.toUpperCase()} /api/v1${operation.path}`;
    const { path, body } = exampleWith(operation, b.ids);
    const answer = await owner.call(operation.method.toUpperCase(), path, body);
    const text = JSON.stringify(answer.body);
    expect({ route, status: answer.status < 500 }).toEqual({ route, status: true });
    for (const mark of b.marks) expect({ route, leaks: text.includes(mark) }).toEqual({ route, leaks: false });
  }
  expect(await snapshot(b.api)).toEqual(before);
  expect(world.subscriber.deliveries.length).toBe(deliveriesBefore);
});

test('FINANCE runs a payout and marks it paid and releases a held commission, named as the member where the sale records who decided; DELETE /commission-plans answers 403', async () => {
  const { programId, api } = await world.system.createProgram({
    maxAutoApprovedCommission: 1,
    riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' },
  });
  const plan = await ok(
    api.post('/commission-plans', {
      name: 'Finance',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  const grace = await ok(
    api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: `grace-${randomUUID().slice(0, 8)}@example.com` }),
  );
  const referral = await ok(api.post('/referrals', { affiliateId: grace.id, email: `c-${randomUUID().slice(0, 8)}@example.com` }));
  const sale = await ok(api.post('/sales', { referralId: referral.id, totalEarned: 100 }));
  expect(sale.commissions[0].status).toBe('HELD');
  const finance = await signedIn(programId, 'FINANCE');

  const released = await ok(
    finance.call('POST', '/commissions/release', { saleId: sale.id, commissionId: sale.commissions[0].id, note: 'checked' }),
  );
  expect(released.commissions[0].decisions[1]).toMatchObject({
    action: 'RELEASE',
    by: { kind: 'TEAM_MEMBER', keyId: finance.memberId, keyPrefix: finance.email },
  });
  const [payout] = await ok(finance.call('POST', '/payouts', {}));
  expect(payout).toMatchObject({ affiliateId: grace.id, amount: 20, status: 'PENDING' });
  expect(await ok(finance.call('PUT', '/payouts', { payoutId: payout.id, status: 'PAID' }))).toMatchObject({
    id: payout.id,
    status: 'PAID',
  });

  const refused = await finance.call('DELETE', '/commission-plans', { id: plan.id });
  expect({ status: refused.status, code: refused.body.code, error: refused.body.error }).toEqual({
    status: 403,
    code: 'role_forbidden',
    error: 'Your role FINANCE cannot DELETE /api/v1/commission-plans',
  });
  expect(await ok(api.get(`/commission-plans?id=${plan.id}`))).toMatchObject({ id: plan.id });

  // Each of those writes is in the program's audit record under the member, the refusal included.
  expect(await auditRecords(() => finance.call('GET', '/audit-records'), 4)).toEqual([
    {
      action: 'member.change',
      operation: 'DELETE /api/v1/commission-plans',
      status: 403,
      actor: { memberId: finance.memberId, email: finance.email },
    },
    {
      action: 'payout.status_changed',
      operation: 'PUT /api/v1/payouts',
      status: 200,
      actor: { memberId: finance.memberId, email: finance.email },
    },
    {
      action: 'member.change',
      operation: 'POST /api/v1/payouts',
      status: 200,
      actor: { memberId: finance.memberId, email: finance.email },
    },
    {
      action: 'member.change',
      operation: 'POST /api/v1/commissions/release',
      status: 200,
      actor: { memberId: finance.memberId, email: finance.email },
    },
  ]);
});

test("ANALYST changes nothing through the API: every operation that changes something, sent as its documented example with the program's own ids, is refused 403 and the program is unchanged", async () => {
  const { programId, api } = await world.system.createProgram();
  const grace = await ok(
    api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: `grace-${randomUUID().slice(0, 8)}@example.com` }),
  );
  const coupon = await ok(api.post('/coupons', { name: 'Spring', percentOff: 10 }));
  const analyst = await signedIn(programId, 'ANALYST');
  const ids: Ids = { affiliateId: grace.id, couponId: coupon.id, 'id:affiliates': grace.id, 'id:coupons': coupon.id };
  const before = await snapshot(api);
  for (const operation of PUBLIC_OPERATIONS.filter((candidate) => scopesOf(candidate).some((scope) => scope !== 'read'))) {
    const route = `${operation.method.toUpperCase()} /api/v1${operation.path}`;
    const { path, body } = exampleWith(operation, ids);
    const answer = await analyst.call(operation.method.toUpperCase(), path, body);
    expect({ route, status: answer.status, code: answer.body?.code }).toEqual({ route, status: 403, code: 'role_forbidden' });
  }
  expect(await snapshot(api)).toEqual(before);
  // Reads work.
  expect(await ok(analyst.call('GET', `/affiliates?id=${grace.id}`))).toMatchObject({ id: grace.id });
});

test('an affiliate portal session a member opens (view as affiliate) names the member: the bank details the affiliate changes in it are recorded with the member and the portal session', async () => {
  const { programId, api } = await world.system.createProgram();
  const ada = await ok(
    api.post('/affiliates', { firstName: 'Ada', lastName: 'Lovelace', email: `ada-${randomUUID().slice(0, 8)}@example.com` }),
  );
  const admin = await signedIn(programId, 'ADMIN');
  const link = await ok(admin.call('POST', '/affiliate-portal-sessions', { affiliateId: ada.id }));
  const opening = await fetch(link.url, { redirect: 'manual' });
  expect(opening.status).toBe(303);
  const cookie = (opening.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
  const portal = `${world.system.gatewayUrl}/portal/api`;
  const { csrfToken } = (await (await fetch(`${portal}/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  const saved = await fetch(`${portal}/payout-details`, {
    method: 'PUT',
    headers: { cookie, 'x-csrf-token': csrfToken, origin: world.system.gatewayUrl, 'content-type': 'application/json' },
    body: JSON.stringify({ payoutDetails: { method: 'PAYPAL', email: 'ada-paid@example.com' } }),
  });
  expect(saved.status).toBe(200);

  const member = { memberId: admin.memberId, email: admin.email };
  expect(await auditRecords(() => api.get('/audit-records'), 2)).toEqual([
    {
      action: 'bank_details.changed',
      operation: 'PUT /portal/api/payout-details',
      status: 200,
      actor: { ...member, affiliatePortalSessionId: link.id, affiliateId: ada.id },
    },
    { action: 'member.change', operation: 'POST /api/v1/affiliate-portal-sessions', status: 200, actor: member },
  ]);
});
