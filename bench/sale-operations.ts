import { printCounts, startCountingSystem } from './lib/operation-counts';
import { sleep } from './lib/stats';
import { codeOfAnAffiliate } from './scenarios/write-path';

/**
 * What one `POST /sales` by promotional code costs, counted, not timed (issue 29): the database
 * commands each component sends and the HTTP requests between components, per sale, from the
 * drivers' own counters (bench/lib/operation-counter-preload.js). Figures that do not depend on how
 * loaded the machine is. Two runs: sales one at a time (nothing to batch), then 64 clients at once
 * (what the write-path scenario does, where the group commits share their writes).
 *
 *   npx tsx bench/sale-operations.ts [--sales=160] [--clients=16]
 */
const SEQUENTIAL = 40;
const CONCURRENT = Number(process.argv.find((arg) => arg.startsWith('--sales='))?.split('=')[1] ?? 160);
const CLIENTS = Number(process.argv.find((arg) => arg.startsWith('--clients='))?.split('=')[1] ?? 16);

async function main() {
  const { bench, settled, stop } = await startCountingSystem('sale-operations');
  try {
    const program = await bench.createProgram();
    const { tag, promoCode, coupon, code } = await codeOfAnAffiliate(program);
    let sequence = 0;
    let resent = 0;
    // A payment not answered 200 (a 503 of a loaded machine) is sent again, as a client would; the resends are reported beside the figures.
    const sell = async () => {
      const body = { promoCode, totalEarned: 100, externalId: `operations-${tag}-${sequence++}` };
      for (let attempt = 0; ; attempt++) {
        const answer = await program.api.send('POST', '/sales', body).catch(() => undefined);
        if (answer?.status === 200) return;
        if (attempt >= 120) throw new Error(`POST /sales: ${answer?.status} ${answer?.body.slice(0, 300)}`);
        resent++;
        await sleep(1000);
      }
    };
    for (let i = 0; i < 5; i++) await sell(); // connections open, recent reads warm

    const before = await settled();
    resent = 0;
    for (let i = 0; i < SEQUENTIAL; i++) await sell();
    const afterSequential = await settled();
    printCounts(`one at a time (${SEQUENTIAL} sales, ${resent} sent again)`, before, afterSequential, SEQUENTIAL);
    resent = 0;
    let left = CONCURRENT;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (left-- > 0) await sell();
      }),
    );
    const afterConcurrent = await settled();

    const [codeNow, couponNow] = await Promise.all([
      program.api.expectOk<{ timesRedeemed: number }>('GET', `/promotional-codes?id=${code.id}`),
      program.api.expectOk<{ timesRedeemed: number }>('GET', `/coupons?id=${coupon.id}`),
    ]);
    console.log(`\ncounters: ${sequence} sales, code ${codeNow.timesRedeemed}, coupon ${couponNow.timesRedeemed}`);
    printCounts(`${CLIENTS} clients at once (${CONCURRENT} sales, ${resent} sent again)`, afterSequential, afterConcurrent, CONCURRENT);
  } finally {
    await stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
