import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { BenchSystem, ensureLocalInfra, ROOT } from './lib/bench-system';
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
type Counts = { database: Record<string, number>; http: number };

const SEQUENTIAL = 40;
const CONCURRENT = Number(process.argv.find((arg) => arg.startsWith('--sales='))?.split('=')[1] ?? 160);
const CLIENTS = Number(process.argv.find((arg) => arg.startsWith('--clients='))?.split('=')[1] ?? 16);

async function main() {
  const infra = ensureLocalInfra();
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: ROOT, stdio: 'inherit' });
  const directory = mkdtempSync(join(tmpdir(), 'sale-operations-'));
  const bench = await BenchSystem.start({
    ...(infra.REDIS_URL ? { REDIS_URL: infra.REDIS_URL } : {}),
    NODE_OPTIONS: `--require ${join(__dirname, 'lib/operation-counter-preload.js')}`,
    BENCH_OPERATION_COUNT_DIR: directory,
  });
  try {
    const componentOf = new Map(bench.processes().map(({ pid, name }) => [pid, name]));
    const snapshot = (): Map<string, Counts> => {
      const byComponent = new Map<string, Counts>();
      for (const file of readdirSync(directory).filter((name) => name.endsWith('.json'))) {
        const component = componentOf.get(Number(file.replace('.json', ''))) ?? 'other';
        const counts = JSON.parse(readFileSync(join(directory, file), 'utf8')) as Counts;
        const into = byComponent.get(component) ?? { database: {}, http: 0 };
        for (const [name, count] of Object.entries(counts.database)) into.database[name] = (into.database[name] ?? 0) + count;
        into.http += counts.http;
        byComponent.set(component, into);
      }
      return byComponent;
    };
    // The counters are written every 100 ms; the relay and the subscribers finish a moment after the answers.
    const settled = async () => {
      await sleep(3000);
      return snapshot();
    };

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
    print(`one at a time (${SEQUENTIAL} sales, ${resent} sent again)`, before, afterSequential, SEQUENTIAL);
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
    print(`${CLIENTS} clients at once (${CONCURRENT} sales, ${resent} sent again)`, afterSequential, afterConcurrent, CONCURRENT);
  } finally {
    await bench.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

function print(title: string, from: Map<string, Counts>, to: Map<string, Counts>, sales: number) {
  console.log(
    `\n### per sale, ${title}\n\n| component | database commands | HTTP requests to other components | commands |\n|---|---:|---:|---|`,
  );
  let totalDatabase = 0;
  let totalHttp = 0;
  for (const [component, counts] of [...to].sort(([a], [b]) => a.localeCompare(b))) {
    const earlier = from.get(component) ?? { database: {}, http: 0 };
    const commands = Object.entries(counts.database)
      .map(([name, count]) => [name, (count - (earlier.database[name] ?? 0)) / sales] as const)
      .filter(([, perSale]) => perSale > 0);
    const database = commands.reduce((sum, [, perSale]) => sum + perSale, 0);
    const http = (counts.http - earlier.http) / sales;
    if (database === 0 && http === 0) continue;
    totalDatabase += database;
    totalHttp += http;
    const named = commands.map(([name, perSale]) => `${name} ${perSale.toFixed(2)}`).join(', ');
    console.log(`| ${component} | ${database.toFixed(2)} | ${http.toFixed(2)} | ${named} |`);
  }
  console.log(`| **all** | **${totalDatabase.toFixed(2)}** | **${totalHttp.toFixed(2)}** | |`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
