import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { round } from '../lib/stats';
import type { BenchProgram, BenchSystem } from '../lib/bench-system';
import { withPeakMemory, type ScenarioContext } from './context';

export type PayoutRun = {
  affiliates: number;
  sales: number;
  /** POST /payouts, repeated until it answers an empty list (a run starts no payout after 5 s). */
  run: { seconds: number; calls: number; payouts: number; commissions: number; commissionsPerSecond: number; failedCalls: number };
  /** Every commission in exactly one payout, one payout per affiliate. */
  correct: boolean;
  reportSeconds: number;
  exportSeconds: number;
};

/**
 * A program whose default plan pays 10 % with no hold, and `sales` sales spread over `affiliates`
 * affiliates: that many DUE commissions for a payout run (bench/payout-operations.ts counts one).
 */
export async function programWithDueCommissions(
  bench: BenchSystem,
  counts: { affiliates: number; sales: number },
  log: (line: string) => void = () => {},
): Promise<BenchProgram> {
  const program = await bench.createProgram();
  const api = program.api;
  await api.expectOk('POST', '/commission-plans', {
    name: 'Bench',
    commissionType: 'PERCENTAGE',
    rate: 10,
    recurring: 'FOREVER',
    holdDays: 0,
    isDefault: true,
  });
  const tag = randomUUID().slice(0, 8);
  const referrals: string[] = [];
  for (let index = 0; index < counts.affiliates; index += 1) {
    const affiliate = await api.expectOk<{ id: string }>('POST', '/affiliates', {
      firstName: 'Payout',
      lastName: `Bench ${index}`,
      email: `payout-${tag}-${index}@example.com`,
    });
    referrals.push(
      (
        await api.expectOk<{ id: string }>('POST', '/referrals', {
          affiliateId: affiliate.id,
          email: `customer-${tag}-${index}@example.com`,
        })
      ).id,
    );
  }
  log(`  ${counts.sales} sales over ${counts.affiliates} affiliates`);
  let next = 0;
  const seller = async () => {
    for (let index = next++; index < counts.sales; index = next++) {
      await api.expectOk('POST', '/sales', {
        referralId: referrals[index % referrals.length],
        totalEarned: 100,
        externalId: `payout-${tag}-${index}`,
      });
    }
  };
  await Promise.all(Array.from({ length: 16 }, seller));
  return program;
}

/**
 * Payout runs over a program with `sales` due commissions of `affiliates` affiliates: how long
 * POST /payouts, called until it answers an empty list, takes to gather and claim them all (each sale's claim a
 * revision-checked write with its sale.updated, 500 sales to one bulk write), then the affiliate report and one payout's CSV export.
 */
export async function payoutRun(context: ScenarioContext) {
  const { bench, plan } = context;
  const { api } = await programWithDueCommissions(bench, plan.payouts, (line) => context.log(line));

  return withPeakMemory(context, async () => {
    const started = performance.now();
    const payouts: { id: string; affiliateId: string; commissions: { commissionId: string }[] }[] = [];
    let calls = 0;
    let failedCalls = 0;
    for (;;) {
      const answer = await api.send('POST', '/payouts', {});
      calls += 1;
      if (answer.status !== 200) failedCalls += 1;
      const created = answer.status === 200 ? (JSON.parse(answer.body) as typeof payouts) : [];
      payouts.push(...created);
      if ((answer.status === 200 && created.length === 0) || calls >= 50) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const claimed = payouts.flatMap((payout) => payout.commissions.map((item) => item.commissionId));
    const reportStarted = performance.now();
    await api.expectOk('GET', `/reports/affiliates?from=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}`);
    const reportSeconds = (performance.now() - reportStarted) / 1000;
    const exportStarted = performance.now();
    if (payouts[0]) await api.send('GET', `/payouts/export?payoutId=${payouts[0].id}`);
    const exportSeconds = (performance.now() - exportStarted) / 1000;
    const result: PayoutRun = {
      affiliates: plan.payouts.affiliates,
      sales: plan.payouts.sales,
      run: {
        seconds: round(seconds, 2),
        calls,
        payouts: payouts.length,
        commissions: claimed.length,
        commissionsPerSecond: round(claimed.length / seconds, 0),
        failedCalls,
      },
      correct: new Set(claimed).size === plan.payouts.sales && payouts.length === plan.payouts.affiliates,
      reportSeconds: round(reportSeconds, 3),
      exportSeconds: round(exportSeconds, 3),
    };
    context.log(
      `    payout runs ${result.run.seconds} s in ${calls} calls: ${result.run.payouts} payouts, ${result.run.commissions} commissions (${result.correct ? 'each once' : 'NOT each once'}); report ${result.reportSeconds} s`,
    );
    return result;
  });
}
