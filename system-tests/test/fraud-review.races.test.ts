import { randomUUID } from 'node:crypto';
import { eventually } from '@affiliate/platform/testing';
import { okBody as ok, type ApiResponse } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * Releases, voids and payout runs racing over the same held commissions (issue 28, RELIABILITY.md):
 * each decision and each claim is a conditional write of the commission's sale, so exactly one of
 * two racing changes lands and the other meets its result. Whatever the interleaving, no held or
 * voided commission is ever paid and none is paid twice.
 */
const world = systemWithSubscriber();

/** A client sends again what the system shed with 503 (Retry-After), as the README asks of clients. */
async function sent(call: () => Promise<ApiResponse>): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt += 1) {
    const response = await call();
    if (response.status !== 503 || attempt >= 20) return response;
    await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
  }
}

test('50 parallel releases, voids and payout runs over the same held commissions never pay a held or voided commission, nor one twice', async () => {
  const urlModifier = `m${randomUUID().slice(0, 8)}`;
  const { api } = await world.system.createProgram({
    urlModifier,
    destinationUrls: [{ url: 'https://shop.example.com/' }],
    maxAutoApprovedCommission: 1,
    riskActions: { OVER_AUTO_APPROVAL_LIMIT: 'HOLD' },
  });
  await ok(
    api.post('/commission-plans', {
      name: 'Races',
      commissionType: 'PERCENTAGE',
      rate: 20,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  const grace = await ok(
    api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', affiliateLink: 'grace' }),
  );
  await eventually(
    async () => expect((await ok(api.get(`/links?affiliateId=${grace.id}`)))[0].fullURLs[0].fullUrl).toContain(`${urlModifier}=`),
    30_000,
  );

  const sales = [];
  for (let index = 0; index < 10; index += 1) {
    const referral = await ok(api.post('/referrals', { affiliateId: grace.id, email: `race-${index}@example.com` }));
    sales.push(await ok(api.post('/sales', { referralId: referral.id, totalEarned: 10 + index })));
  }
  const commissions = sales.map((sale) => ({ saleId: sale.id as string, commissionId: sale.commissions[0].id as string }));
  for (const sale of sales) expect(sale.commissions[0].status).toBe('HELD');

  // For each commission two releases, a void and two payout runs, all 50 at once.
  const operations: (() => Promise<ApiResponse>)[] = [];
  for (let index = 0; index < 50; index += 1) {
    const target = commissions[Math.floor(index / 5)]!;
    if (index % 5 < 2) operations.push(() => sent(() => api.post('/commissions/release', { ...target, note: `race ${index}` })));
    else if (index % 5 === 2) operations.push(() => sent(() => api.post('/commissions/void', { ...target, reason: `race ${index}` })));
    else operations.push(() => sent(() => api.post('/payouts', {})));
  }
  const answers = await Promise.all(operations.map((operation) => operation()));
  // Each is done, refused with a 400 naming the state it met, or (a payout run) 409 while another run holds the program.
  for (const answer of answers) expect([200, 400, 409]).toContain(answer.status);

  // Whatever is still due is gathered by a last run; then every payout is paid.
  for (;;) {
    const more = await sent(() => api.post('/payouts', {}));
    if (more.status === 409) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    expect(more.status).toBe(200);
    if (more.body.length === 0) break;
  }
  const payouts = await ok(api.get('/payouts?limit=1000'));
  for (const payout of payouts) if (payout.status === 'PENDING') await ok(api.put('/payouts', { payoutId: payout.id, status: 'PAID' }));

  const inPayouts = payouts.flatMap((payout: { id: string; commissions: { commissionId: string }[] }) =>
    payout.commissions.map((item) => item.commissionId),
  );
  expect(new Set(inPayouts).size).toBe(inPayouts.length);
  for (const { saleId, commissionId } of commissions) {
    const commission = (await ok(api.get(`/sales?id=${saleId}`))).commissions.find((entry: { id: string }) => entry.id === commissionId);
    const lastDecision = commission.decisions.at(-1).action;
    const paid = inPayouts.includes(commissionId);
    // Decided by the first release or the void, whichever landed: paid exactly when released, and a voided one is in no payout.
    expect({ commissionId, status: commission.status, paid }).toEqual({
      commissionId,
      status: lastDecision === 'RELEASE' ? 'PAID' : 'VOID',
      paid: lastDecision === 'RELEASE',
    });
    if (commission.decisions.some((decision: { action: string }) => decision.action === 'VOID')) expect(lastDecision).toBe('VOID');
  }
  const total = payouts.reduce((sum: number, payout: { amount: number }) => sum + payout.amount, 0);
  const paidCommissions = sales
    .filter((sale) => inPayouts.includes(sale.commissions[0].id))
    .reduce((sum, sale) => sum + sale.commissions[0].amount, 0);
  expect(Math.round(total * 100)).toBe(Math.round(paidCommissions * 100));
  expect(await ok(api.get('/commissions?status=HELD'))).toEqual([]);
});
