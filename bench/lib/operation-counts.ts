import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchSystem, ensureLocalInfra, ROOT } from './bench-system';
import { sleep } from './stats';

/**
 * The system started with every component counting its own database commands and HTTP requests to
 * other components (operation-counter-preload.js), for scripts that count what an operation costs
 * (bench/sale-operations.ts, bench/payout-operations.ts): counted at the drivers, not guessed from the code.
 */
export type Counts = { database: Record<string, number>; http: number };

export type CountingSystem = {
  bench: BenchSystem;
  /** Each component's totals so far, once the last requests' work (relay, subscribers) has been counted. */
  settled: () => Promise<Map<string, Counts>>;
  stop: () => Promise<void>;
};

export async function startCountingSystem(name: string): Promise<CountingSystem> {
  const infra = ensureLocalInfra();
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: ROOT, stdio: 'inherit' });
  const directory = mkdtempSync(join(tmpdir(), `${name}-`));
  const bench = await BenchSystem.start({
    ...(infra.REDIS_URL ? { REDIS_URL: infra.REDIS_URL } : {}),
    NODE_OPTIONS: `--require ${join(__dirname, 'operation-counter-preload.js')}`,
    BENCH_OPERATION_COUNT_DIR: directory,
  });
  const componentOf = new Map(bench.processes().map(({ pid, name: component }) => [pid, component]));
  const snapshot = (): Map<string, Counts> => {
    const byComponent = new Map<string, Counts>();
    for (const file of readdirSync(directory).filter((entry) => entry.endsWith('.json'))) {
      const component = componentOf.get(Number(file.replace('.json', ''))) ?? 'other';
      const counts = JSON.parse(readFileSync(join(directory, file), 'utf8')) as Counts;
      const into = byComponent.get(component) ?? { database: {}, http: 0 };
      for (const [command, count] of Object.entries(counts.database)) into.database[command] = (into.database[command] ?? 0) + count;
      into.http += counts.http;
      byComponent.set(component, into);
    }
    return byComponent;
  };
  return {
    bench,
    // The counters are written every 100 ms; the relay and the subscribers finish a moment after the answers.
    settled: async () => {
      await sleep(3000);
      return snapshot();
    },
    stop: async () => {
      await bench.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A markdown table of what each component sent between two snapshots, per `unit` (`count` of them). */
export function printCounts(title: string, from: Map<string, Counts>, to: Map<string, Counts>, count: number, unit = 'sale') {
  console.log(
    `\n### per ${unit}, ${title}\n\n| component | database commands | HTTP requests to other components | commands |\n|---|---:|---:|---|`,
  );
  let totalDatabase = 0;
  let totalHttp = 0;
  for (const [component, counts] of [...to].sort(([a], [b]) => a.localeCompare(b))) {
    const earlier = from.get(component) ?? { database: {}, http: 0 };
    const commands = Object.entries(counts.database)
      .map(([command, total]) => [command, (total - (earlier.database[command] ?? 0)) / count] as const)
      .filter(([, per]) => per > 0);
    const database = commands.reduce((sum, [, per]) => sum + per, 0);
    const http = (counts.http - earlier.http) / count;
    if (database === 0 && http === 0) continue;
    totalDatabase += database;
    totalHttp += http;
    const named = commands.map(([command, per]) => `${command} ${per.toFixed(2)}`).join(', ');
    console.log(`| ${component} | ${database.toFixed(2)} | ${http.toFixed(2)} | ${named} |`);
  }
  console.log(`| **all** | **${totalDatabase.toFixed(2)}** | **${totalHttp.toFixed(2)}** | |`);
}
