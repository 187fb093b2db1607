import { printCounts, startCountingSystem } from './lib/operation-counts';
import { programWithDueCommissions } from './scenarios/payouts';

/**
 * What a payout run costs, counted, not timed (issue 29): the database commands each component sends
 * and its HTTP requests to other components while `POST /payouts` is called until it answers an empty
 * list, over a program with `--sales` due commissions of `--affiliates` affiliates (the payouts
 * scenario's program), from the drivers' own counters (bench/lib/operation-counter-preload.js). The
 * sale service's figure includes its relay publishing each claimed sale's sale.updated.
 *
 *   npx tsx bench/payout-operations.ts [--affiliates=50] [--sales=1000]
 */
const option = (name: string, fallback: number) =>
  Number(process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const AFFILIATES = option('affiliates', 50);
const SALES = option('sales', 1_000);

async function main() {
  const { bench, settled, stop } = await startCountingSystem('payout-operations');
  try {
    const { api } = await programWithDueCommissions(bench, { affiliates: AFFILIATES, sales: SALES }, console.log);
    const before = await settled();
    let calls = 0;
    let commissions = 0;
    for (;;) {
      calls += 1;
      const answer = await api.send('POST', '/payouts', {});
      if (answer.status !== 200) throw new Error(`POST /payouts: ${answer.status} ${answer.body.slice(0, 300)}`);
      const created = JSON.parse(answer.body) as { commissions: unknown[] }[];
      commissions += created.reduce((sum, payout) => sum + payout.commissions.length, 0);
      if (created.length === 0) break;
    }
    const after = await settled();
    const title = `${calls} calls of POST /payouts until it answered [], ${commissions} commissions of ${AFFILIATES} affiliates`;
    printCounts(title, before, after, 1, 'payout run (all calls)');
  } finally {
    await stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
