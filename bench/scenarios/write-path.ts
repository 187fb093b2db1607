import { randomUUID } from 'node:crypto';
import type { BenchProgram } from '../lib/bench-system';
import type { LoadResult } from '../lib/http-load';
import { asLoadResult, closedLoop } from '../lib/paced-load';
import { round, sleep } from '../lib/stats';
import { withPeakMemory, type ScenarioContext } from './context';

export type WritePath = {
  request: string;
  connections: number;
  run: LoadResult;
  salesPerSecond: number;
  /** 200 answers (warm-up and measured), payments sent again after the load, all payments, and the counters the sales moved. */
  counters: {
    ok200: number;
    resent: number;
    payments: number;
    promotionalCodeTimesRedeemed: number;
    couponTimesRedeemed: number;
    match: boolean;
  };
};

/** An affiliate of the program with a promotional code of a 10 % coupon: what the sales by code redeem. */
export async function codeOfAnAffiliate(program: BenchProgram) {
  const tag = randomUUID().slice(0, 8);
  const affiliate = await program.api.expectOk<{ id: string }>('POST', '/affiliates', {
    firstName: 'Sale',
    lastName: 'Bench',
    email: `sales-${tag}@example.com`,
  });
  const coupon = await program.api.expectOk<{ id: string }>('POST', '/coupons', { name: 'Bench sales', percentOff: 10 });
  const promoCode = `BENCH${tag.toUpperCase()}`;
  const code = await program.api.expectOk<{ id: string }>('POST', '/promotional-codes', {
    couponId: coupon.id,
    code: promoCode,
    affiliateId: affiliate.id,
  });
  return { tag, promoCode, coupon, code };
}

/**
 * POST /sales by promotional code at a fixed concurrency: each sale redeems the code (coupon
 * service) and records the sale with its commission (sale service) through the gateway. Afterwards
 * the payments not answered 200 are sent again as a client would, and the code's and the coupon's
 * timesRedeemed must equal the number of payments: no lost or double counts.
 * The load comes from a closed loop of keep-alive clients that waits for the requests in flight at
 * the end, so every sale the system made is among the answers counted.
 */
export async function writePath(context: ScenarioContext) {
  const { bench, plan } = context;
  const program = await bench.createProgram();
  const { tag, promoCode, coupon, code } = await codeOfAnAffiliate(program);

  let sequence = 0;
  // Payments not answered 200 (a 503 shed, a deadline, a broken connection): a client sends them
  // again with the same externalId, so they are sent again after the load, and then every payment
  // must be one sale, counted once. A 503 at the gateway's deadline may hide a sale the service
  // recorded: counting 200s alone called that a double count on a loaded machine.
  const unanswered = new Set<string>();
  const sale = (externalId: string) => ({ promoCode, totalEarned: 100, externalId });
  const sell = async () => {
    const externalId = `bench-${tag}-${sequence++}`;
    unanswered.add(externalId);
    const answer = await program.api.send('POST', '/sales', sale(externalId));
    if (answer.status === 200) unanswered.delete(externalId);
    return answer;
  };
  const load = (seconds: number) => closedLoop({ connections: plan.sales.connections, seconds, send: sell });
  return withPeakMemory(context, async () => {
    context.log(`  warm-up ${plan.sales.warmupSeconds} s, then ${plan.sales.seconds} s at ${plan.sales.connections} connections`);
    const warmup = await load(plan.sales.warmupSeconds);
    const run = asLoadResult(await load(plan.sales.seconds));
    const ok200 = (warmup.statusCodes['200'] ?? 0) + (run.statusCodes['200'] ?? 0);
    const resent = unanswered.size;
    for (const externalId of unanswered) {
      for (let attempt = 0; attempt < 20; attempt++) {
        const answer = await program.api.send('POST', '/sales', sale(externalId)).catch(() => undefined);
        if (answer?.status === 200) break;
        await sleep(500);
      }
    }
    const payments = sequence;
    // Redemption is part of the request, so the counters should be final; allow the stragglers
    // of timed-out requests a moment to land before comparing.
    let counters = await readCounters();
    for (let attempt = 0; attempt < 10 && (counters.code !== payments || counters.coupon !== payments); attempt++) {
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
        resent,
        payments,
        promotionalCodeTimesRedeemed: counters.code,
        couponTimesRedeemed: counters.coupon,
        match: counters.code === payments && counters.coupon === payments,
      },
    };
    context.log(
      `    ${result.salesPerSecond} sales/s, p99 ${run.latencyMs.p99} ms, errors ${run.errors}, non-2xx ${run.non2xx}; counters ${JSON.stringify(result.counters)}`,
    );
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
