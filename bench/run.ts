import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { summarizeProfiles } from './lib/cpu-profile';
import { DatabaseOperations } from './lib/db-operations';
import { BenchSystem, ensureLocalInfra, ROOT } from './lib/bench-system';
import { ensureNginx, nginxVersion } from './lib/nginx';
import { FULL, QUICK } from './lib/plan';
import { describeMachine, writeResults, type BenchResults } from './lib/report';
import { TraceCollector } from './lib/trace-collector';
import { WebhookReceiver } from './lib/webhook-receiver';
import { clickIntake } from './scenarios/click-intake';
import type { ScenarioContext } from './scenarios/context';
import { dataGrowth } from './scenarios/data-growth';
import { eventLatency } from './scenarios/event-latency';
import { fanOut } from './scenarios/fan-out';
import { gatewayOverhead } from './scenarios/gateway-overhead';
import { noisyNeighbour } from './scenarios/noisy-neighbour';
import { overload } from './scenarios/overload';
import { payoutRun } from './scenarios/payouts';
import { eventsAgainstRunningSystem, writeRunningSystemResults } from './scenarios/running-system';
import { writePath } from './scenarios/write-path';

/**
 * npm run bench [-- --quick] [--only=gateway,sales,clicks,payouts,fanout,events,overload,neighbour,growth] [--candidate-gateway=<dist/start.js>] [--profile]
 * Starts the system, runs the scenarios one after the other, writes bench/results/latest.json,
 * appends the table to bench/RESULTS.md and quotes it in bench/README.md (quick runs write under
 * bench/results/quick/ instead, so CI never touches the committed history).
 *
 * npm run bench -- --only=events --target=<gateway URL> [--quick]
 * Starts nothing: the event scenario's 100/s step against a system already running on this machine
 * (`npm start`), written under bench/results/running/ (scenarios/running-system.ts).
 */
const args = process.argv.slice(2);
const flag = (name: string) => args.find((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
const valueOf = (name: string) => flag(name)?.split('=').slice(1).join('=');
const plan = flag('quick') ? QUICK : FULL;
const only = valueOf('only')?.split(',');
const wanted = (scenario: string) => !only || only.includes(scenario);
const candidateGateway = valueOf('candidate-gateway');
const profile = Boolean(flag('profile'));
const target = valueOf('target');

const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;
const log = (line: string) => console.log(`[bench ${elapsed().toFixed(0).padStart(3)} s] ${line}`);

/** The local Redis holds the gateway's rate-limit counters: part of the system, though not started here. */
function redisProcess(redisUrl: string | undefined): Map<number, string> {
  const port = redisUrl ? new URL(redisUrl).port || '6379' : '6379';
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (/redis-server/.test(cmdline) && cmdline.includes(`:${port}`)) return new Map([[Number(entry), 'redis']]);
    } catch {
      // the process ended while we looked
    }
  }
  return new Map();
}

async function main(): Promise<number> {
  if (target !== undefined) {
    // Only the event scenario can run against a system it did not start: the others need its processes and databases.
    if (!only || only.join(',') !== 'events') throw new Error('--target runs the event scenario only: add --only=events');
    if (!/^https?:\/\/[^/]+/.test(target))
      throw new Error(`--target must be the gateway's URL, e.g. http://localhost:8080 (got "${target}")`);
    log(`${plan.mode} run: the event scenario's 100/s step against the running system at ${target}`);
    const step = await eventsAgainstRunningSystem(target, plan, 100, log);
    console.log(`\n${writeRunningSystemResults(step)}`);
    log(`done in ${Math.round(elapsed())} s; results in bench/results/running/latest.json`);
    return 0;
  }
  log(`${plan.mode} run: ${only ? `scenarios ${only.join(', ')}` : 'all scenarios'}, budget ${plan.budgetSeconds} s`);
  const notes: string[] = [];
  const failures: string[] = [];

  log('local infrastructure (scripts/local-infra.sh start) and build (tsc -b)');
  const infra = ensureLocalInfra();
  const redisUrl = process.env.REDIS_URL ?? infra.REDIS_URL;
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: ROOT, stdio: 'inherit' });

  let nginxBinary: string | undefined;
  let nginxSkipped: string | undefined;
  if (wanted('gateway')) {
    nginxBinary = ensureNginx(log);
    if (!nginxBinary) {
      nginxSkipped = 'nginx could not be installed on this machine: the nginx comparison is skipped';
      log(nginxSkipped);
      notes.push(nginxSkipped);
    }
  }
  const machine = describeMachine(ROOT, nginxBinary ? nginxVersion(nginxBinary) : undefined);

  const receiver = new WebhookReceiver();
  await receiver.start();
  const traces = new TraceCollector();
  await traces.start();
  // The run's database server is started by this process (startDisposableMongo), which passes this on to its JVM.
  const databaseGcLog = join(mkdtempSync(join(tmpdir(), 'bench-gc-')), 'mongodb-gc.log');
  process.env.MONGO_LOCAL_GC_LOG = databaseGcLog;
  log('starting the system: MongoDB-compatible server, RabbitMQ, six components');
  const profileDir = join(ROOT, 'bench/results/profiles', new Date().toISOString().replace(/[:.]/g, '-'));
  if (profile) {
    mkdirSync(profileDir, { recursive: true });
    notes.push('profiled run (--profile): every component ran under the CPU profiler, which slows it down');
  }
  // Every component counts the database commands it sends (the local server keeps no counters of its own).
  const operations = new DatabaseOperations(mkdtempSync(join(tmpdir(), 'bench-db-operations-')));
  const preloads = [
    DatabaseOperations.preload(),
    `--require ${join(__dirname, 'lib/gc-observer-preload.js')}`,
    ...(profile ? [`--require ${join(__dirname, 'lib/cpu-profile-preload.js')}`] : []),
  ];
  const bench = await BenchSystem.start({
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...traces.environment(),
    NODE_OPTIONS: preloads.join(' '),
    ...operations.env(),
    ...(profile ? { BENCH_CPU_PROFILE_DIR: profileDir } : {}),
  });
  const componentOfPid = new Map(bench.processes().map(({ pid, name }) => [pid, name]));
  const stopAll = async () => {
    await bench.stop().catch((error: unknown) => log(`stopping the system: ${String(error)}`));
    await receiver.stop();
    await traces.stop();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  log(`system up (gateway ${bench.gatewayUrl})`);
  if (!redisUrl) notes.push('REDIS_URL unknown: the gateway counted rate limits in memory');

  const context: ScenarioContext = {
    bench,
    receiver,
    plan,
    remainingSeconds: () => plan.budgetSeconds - elapsed(),
    log,
    extraProcesses: redisProcess(redisUrl),
    traces,
    databaseGcLog,
    operations,
  };
  const results: BenchResults = {
    startedAt: new Date().toISOString(),
    mode: plan.mode,
    seconds: 0,
    machine,
    settings: {
      logLevel: process.env.SYSTEM_LOG_LEVEL ?? 'warn',
      rateLimitStore: redisUrl ? 'redis' : 'memory',
      loadGenerator: 'autocannon (in the bench process)',
    },
    failures,
    notes,
  };
  const scenario = async <
    K extends
      | 'gatewayOverhead'
      | 'writePath'
      | 'clickIntake'
      | 'payoutRun'
      | 'fanOut'
      | 'eventLatency'
      | 'overload'
      | 'noisyNeighbour'
      | 'dataGrowth',
  >(
    key: K,
    name: string,
    title: string,
    body: () => Promise<NonNullable<BenchResults[K]>>,
  ) => {
    if (!wanted(name)) return;
    log(title);
    try {
      results[key] = await body();
    } catch (error) {
      failures.push(`${title}: ${(error as Error).stack ?? String(error)}`);
      log(`FAILED: ${(error as Error).message}`);
    }
  };

  try {
    const candidateUrl = candidateGateway ? await bench.startCandidateGateway(candidateGateway) : undefined;
    await scenario('gatewayOverhead', 'gateway', 'gateway overhead: GET coupon by id via the gateway, directly, via nginx', () =>
      gatewayOverhead(context, { nginxBinary, nginxSkipped, candidateUrl }),
    );
    await scenario('writePath', 'sales', `write path: POST /sales by promo code at ${plan.sales.connections} connections`, () =>
      writePath(context),
    );
    await scenario(
      'clickIntake',
      'clicks',
      `click intake: POST /clicks with identity and deduplication at ${plan.clicks.connections} connections`,
      () => clickIntake(context),
    );
    await scenario(
      'payoutRun',
      'payouts',
      `payouts: one run over ${plan.payouts.sales} due commissions of ${plan.payouts.affiliates} affiliates`,
      () => payoutRun(context),
    );
    // Before the event-rate steps: an overloaded step leaves a backlog that would be measured here too.
    await scenario(
      'noisyNeighbour',
      'neighbour',
      `noisy neighbour: ${plan.noisyNeighbour.burstEvents} events of one program while another sends ${plan.noisyNeighbour.quietRatePerSecond}/s`,
      () => noisyNeighbour(context),
    );
    // It leaves another program's objects in every database: what follows runs on grown data.
    await scenario(
      'dataGrowth',
      'growth',
      `data growth: the hot paths before and after ${plan.dataGrowth.objects} objects of another program`,
      () => dataGrowth(context),
    );
    await scenario(
      'eventLatency',
      'events',
      `event latency: POST /affiliates to signed webhook at ${plan.events.rates.join(' and ')}/s`,
      () => eventLatency(context),
    );
    // After the event rates, whose highest sustained rate its delivery rate is held against.
    await scenario(
      'overload',
      'overload',
      `overload: POST /affiliates offered at ${plan.overload.offeredPerSecond}/s for ${plan.overload.seconds} s, past capacity`,
      () => overload(context, results.eventLatency?.highestSustainedPerSecond),
    );
    // Last: its thousands of deliveries would otherwise still be queued in front of the latency steps.
    await scenario('fanOut', 'fanout', `fan-out: affiliate.created to ${plan.fanOut.endpoints} endpoints`, () => fanOut(context));
  } finally {
    log('stopping the system');
    await stopAll();
  }
  if (profile) {
    results.profiles = summarizeProfiles(profileDir, (pid) => componentOfPid.get(pid));
    for (const summary of results.profiles.slice(0, 3)) {
      log(
        `profile of ${summary.component} (${summary.sampledSeconds} s of CPU): ${summary.byPackage
          .slice(0, 5)
          .map((each) => `${each.package} ${each.selfPercent}%`)
          .join(', ')}`,
      );
      for (const hot of summary.hottest.slice(0, 8)) log(`    ${String(hot.selfPercent).padStart(5)}%  ${hot.function}  ${hot.where}`);
    }
  }
  if (results.payoutRun && !results.payoutRun.correct) failures.push('payouts: a commission is missing from the payouts or in two of them');
  if (results.writePath && !results.writePath.counters.match)
    failures.push('write path: the counters do not equal the number of payments (each sent until answered 200)');
  if (results.clickIntake && !results.clickIntake.counters.match)
    failures.push("click intake: the link's clicks do not equal the answers that said counted");
  if (receiver.badSignatures > 0) failures.push(`${receiver.badSignatures} webhook deliveries failed signature verification`);

  results.seconds = Math.round(elapsed());
  // Only a complete full run is history; quick (CI) and partial runs keep to ignored directories.
  const complete = plan.mode === 'full' && !only;
  const out = complete ? join(ROOT, 'bench') : join(ROOT, 'bench/results', only ? 'partial' : 'quick');
  const table = writeResults(results, {
    json: join(out, complete ? 'results/latest.json' : 'latest.json'),
    history: join(out, 'RESULTS.md'),
    readme: complete ? join(ROOT, 'bench/README.md') : undefined,
  });
  console.log(`\n${table}`);
  log(`done in ${Math.round(elapsed())} s; results in ${out}`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
