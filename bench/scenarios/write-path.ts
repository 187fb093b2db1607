import { randomUUID } from 'node:crypto';
import type { LoadResult } from '../lib/http-load';
import { asLoadResult, closedLoop } from '../lib/paced-load';
import { round, sleep } from '../lib/stats';
import { withPeakMemory, type ScenarioContext } from './context';

export type WritePath = {
  request: string;
  connections: number;
  run: LoadResult;
  salesPerSecond: number;
  /** 200 answers (warm-up and measured) against the counters the sales moved. */
  counters: { ok200: number; promotionalCodeTimesRedeemed: number; couponTimesRedeemed: number; match: boolean };
};

/**
 * POST /sales by promotional code at a fixed concurrency: each sale redeems the code (coupon
 * service) and records the sale with its commission (sale service) through the gateway. Afterwards
 * the code's and the coupon's timesRedeemed must equal the number of 200s: no lost or double counts.
 * The load comes from a closed loop of keep-alive clients that waits for the requests in flight at
 * the end, so every sale the system made is among the answers counted.
 */
export async function writePath(context: ScenarioContext) {
  const { bench, plan } = context;
  const program = await bench.createProgram();
  const tag = randomUUID().slice(0, 8);
  const affiliate = await program.api.expectOk<{ id: string }>('POST', '/affiliates', { firstName: 'Sale', lastName: 'Bench', email: `sales-${tag}@example.com` });
  const coupon = await program.api.expectOk<{ id: string }>('POST', '/coupons', { name: 'Bench sales', percentOff: 10 });
  const promoCode = `BENCH${tag.toUpperCase()}`;
  const code = await program.api.expectOk<{ id: string }>('POST', '/promotional-codes', { couponId: coupon.id, code: promoCode, affiliateId: affiliate.id });

  let sequence = 0;
  const sell = () => program.api.send('POST', '/sales', { promoCode, totalEarned: 100, externalId: `bench-${tag}-${sequence++}` });
  const load = (seconds: number) => closedLoop({ connections: plan.sales.connections, seconds, send: sell });
  return withPeakMemory(context, async () => {
    context.log(`  warm-up ${plan.sales.warmupSeconds} s, then ${plan.sales.seconds} s at ${plan.sales.connections} connections`);
    const warmup = await load(plan.sales.warmupSeconds);
    const run = asLoadResult(await load(plan.sales.seconds));
    const ok200 = (warmup.statusCodes['200'] ?? 0) + (run.statusCodes['200'] ?? 0);
    // Redemption is part of the request, so the counters should be final; allow the stragglers
    // of timed-out requests a moment to land before comparing.
    let counters = await readCounters();
    for (let attempt = 0; attempt < 10 && (counters.code !== ok200 || counters.coupon !== ok200); attempt++) {
      await sleep(500);
      counters = await readCounters();
    }
    const result: WritePath = {
      request: 'POST /api/v1/sales {promoCode, totalEarned, externalId}',
      connections: plan.sales.connections,
      run,
      salesPerSecond: round((run.statusCodes['200'] ?? 0) / run.seconds, 1),
      counters: {
        ok200,
        promotionalCodeTimesRedeemed: counters.code,
        couponTimesRedeemed: counters.coupon,
        match: counters.code === ok200 && counters.coupon === ok200,
      },
    };
    context.log(`    ${result.salesPerSecond} sales/s, p99 ${run.latencyMs.p99} ms, errors ${run.errors}, non-2xx ${run.non2xx}; counters ${JSON.stringify(result.counters)}`);
    return result;
  });

  async function readCounters(): Promise<{ code: number; coupon: number }> {
    const [codeNow, couponNow] = await Promise.all([
      program.api.expectOk<{ timesRedeemed: number }>('GET', `/promotional-codes?id=${code.id}`),
      program.api.expectOk<{ timesRedeemed: number }>('GET', `/coupons?id=${coupon.id}`),
    ]);
    return { code: codeNow.timesRedeemed, coupon: couponNow.timesRedeemed };
  }
}
