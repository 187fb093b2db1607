import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { ProfileSummary } from './cpu-profile';
import { CLICK_TARGET_PER_SECOND, type ClickIntake } from '../scenarios/click-intake';
import type { ResourceUse } from '../scenarios/context';
import type { DataGrowth } from '../scenarios/data-growth';
import type { EventLatency } from '../scenarios/event-latency';
import type { FanOut } from '../scenarios/fan-out';
import type { GatewayOverhead } from '../scenarios/gateway-overhead';
import type { NoisyNeighbour } from '../scenarios/noisy-neighbour';
import { failuresOf, type Overload } from '../scenarios/overload';
import type { PayoutRun } from '../scenarios/payouts';
import type { WritePath } from '../scenarios/write-path';

/** A scenario's figures and what it used of the machine (scenarios/context.ts, `withPeakMemory`; results read back may lack the newer fields). */
type WithMemory<T> = T & Pick<ResourceUse, 'peakRssMiB'> & Partial<ResourceUse>;

export type BenchResults = {
  startedAt: string;
  mode: 'full' | 'quick';
  seconds: number;
  machine: Record<string, string | number>;
  settings: Record<string, string>;
  gatewayOverhead?: WithMemory<GatewayOverhead>;
  writePath?: WithMemory<WritePath>;
  clickIntake?: WithMemory<ClickIntake>;
  payoutRun?: WithMemory<PayoutRun>;
  fanOut?: WithMemory<FanOut>;
  eventLatency?: WithMemory<EventLatency>;
  overload?: WithMemory<Overload>;
  noisyNeighbour?: WithMemory<NoisyNeighbour>;
  dataGrowth?: WithMemory<DataGrowth>;
  profiles?: ProfileSummary[];
  failures: string[];
  notes: string[];
};

export function describeMachine(root: string, nginx: string | undefined): Record<string, string | number> {
  const commit = (() => {
    try {
      return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const osName = existsSync('/etc/os-release')
    ? (/^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'Linux')
    : process.platform;
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${osName}, kernel ${release()}`,
    node: process.version,
    nginx: nginx ?? 'not available',
    commit,
    loadAverageAtStart: loadavg()[0]?.toFixed(2) ?? '',
  };
}

/** Convoy's processes together at their peak in the fan-out scenario, measured on the same machine (issue 29). */
const CONVOY_FAN_OUT_PEAK_MIB = 746;

const fmt = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits);

/** The run as markdown: the machine, a table of the measurements, the ratios, peak RSS per process. */
export function markdown(results: BenchResults): string {
  const m = results.machine;
  const lines: string[] = [
    `### ${results.startedAt} · ${results.mode} run · ${Math.round(results.seconds)} s`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, nginx ${m.nginx}; commit ${m.commit}; load average at start ${m.loadAverageAtStart}.`,
    '',
    '| scenario | throughput | p50 ms | p99 ms | errors | notes |',
    '|---|---:|---:|---:|---:|---|',
  ];
  const gateway = results.gatewayOverhead;
  if (gateway) {
    for (const [name, path] of Object.entries(gateway.paths)) {
      lines.push(
        `| GET coupon by id: ${name} | ${fmt(path.loaded.requestsPerSecond, 0)} req/s | ${fmt(path.loaded.latencyMs.p50, 2)} | ${fmt(path.loaded.latencyMs.p99, 2)} | ${path.loaded.errors + path.loaded.non2xx} | ${gateway.connections} connections; unloaded p50 ${fmt(path.unloaded.latencyMs.p50, 2)} ms, p99 ${fmt(path.unloaded.latencyMs.p99, 2)} ms |`,
      );
    }
    if (gateway.nginxSkipped) lines.push(`| GET coupon by id: nginx | skipped | | | | ${gateway.nginxSkipped} |`);
  }
  const sales = results.writePath;
  if (sales) {
    const c = sales.counters;
    lines.push(
      `| POST /sales by promo code | ${fmt(sales.salesPerSecond, 0)} sales/s | ${fmt(sales.run.latencyMs.p50, 1)} | ${fmt(sales.run.latencyMs.p99, 1)} | ${sales.run.errors + sales.run.non2xx} | ${sales.connections} connections, ${fmt(sales.run.seconds, 0)} s; counters ${c.match ? 'match' : 'DO NOT match'} the payments (${c.payments} payments: ${c.ok200} answered 200 under load, ${c.resent} sent again after it; code ${c.promotionalCodeTimesRedeemed}, coupon ${c.couponTimesRedeemed}) |`,
    );
  }
  const clicks = results.clickIntake;
  if (clicks) {
    const c = clicks.counters;
    lines.push(
      `| POST /clicks with identity and dedup | ${fmt(clicks.clicksPerSecond, 0)} clicks/s | ${fmt(clicks.run.latencyMs.p50, 1)} | ${fmt(clicks.run.latencyMs.p99, 1)} | ${clicks.run.errors + clicks.run.non2xx} | ${clicks.connections} connections, ${fmt(clicks.run.seconds, 0)} s; ${c.counted} counted, ${c.duplicates} duplicates; link's clicks ${c.match ? 'match' : 'DO NOT match'} the counted answers (${c.linkClicks}) |`,
    );
  }
  const payouts = results.payoutRun;
  if (payouts) {
    const run = payouts.run;
    lines.push(
      `| POST /payouts until empty, ${payouts.sales} due commissions of ${payouts.affiliates} affiliates | ${fmt(run.commissionsPerSecond, 0)} commissions/s | | | ${run.failedCalls} | ${fmt(run.seconds, 1)} s in ${run.calls} calls; ${run.payouts} payouts, ${run.commissions} commissions, ${payouts.correct ? 'each in exactly one' : 'NOT each in exactly one'}; GET /reports/affiliates ${fmt(payouts.reportSeconds * 1000, 0)} ms, one payout's CSV ${fmt(payouts.exportSeconds * 1000, 0)} ms |`,
    );
  }
  const events = results.eventLatency;
  if (events) {
    for (const step of events.steps) {
      lines.push(
        `| affiliate.created → webhook at ${step.targetPerSecond}/s | ${fmt(step.acceptedPerSecond)} accepted/s, ${fmt(step.deliveredPerSecond)} delivered/s | ${fmt(step.latencyMs.p50)} | ${fmt(step.latencyMs.p99)} | ${step.failedRequests} | max ${fmt(step.latencyMs.max)} ms; backlog ${step.backlogGrowthPerSecond >= 0 ? '+' : ''}${fmt(step.backlogGrowthPerSecond)}/s; ${step.undelivered} undelivered; ${step.sustained ? 'sustained' : 'not sustained'} for ${fmt(step.seconds, 0)} s |`,
      );
    }
  }
  const over = results.overload;
  if (over) {
    lines.push(
      `| overload: POST /affiliates offered at ${over.offeredPerSecond}/s | ${fmt(over.acceptedPerSecond)} accepted/s, ${fmt(over.deliveredPerSecond)} delivered/s | ${fmt(over.latencyMs.p50)} | ${fmt(over.latencyMs.p99)} | ${over.failed} | ${fmt(over.seconds, 0)} s; shed ${over.shed} (${fmt(over.shedShare * 100, 1)} %) with 503 and Retry-After; max ${fmt(over.latencyMs.max)} ms; ${over.undelivered} undelivered ${over.drainLimitSeconds} s after; held against ${fmt(over.sustainedPerSecond)}/s (${over.sustainedFrom}) |`,
    );
  }
  const fan = results.fanOut;
  if (fan) {
    lines.push(
      `| fan-out: 1 event type × ${fan.endpoints} endpoints | ${fmt(fan.deliveriesPerSecond, 0)} deliveries/s | | | ${fan.expectedDeliveries - fan.delivered} | ${fan.events} events, ${fan.delivered}/${fan.expectedDeliveries} delivered in ${fmt(fan.seconds, 1)} s |`,
    );
  }
  const neighbour = results.noisyNeighbour;
  if (neighbour) {
    lines.push(
      `| noisy neighbour: A's affiliate.created → webhook during B's burst | A ${neighbour.quietRatePerSecond}/s; B ${fmt(neighbour.burstAcceptedPerSecond)} accepted/s | ${fmt(neighbour.quietLatencyMs.p50)} | ${fmt(neighbour.quietLatencyMs.p99)} | ${neighbour.quietUndelivered} | B's ${neighbour.burstEvents} events in ${fmt(neighbour.burstSeconds)} s; max ${fmt(neighbour.quietLatencyMs.max)} ms over A's ${neighbour.quietEvents} events; ${neighbour.noisyDrainedSeconds === null || neighbour.noisyDrainedSeconds === undefined ? "B's webhooks not all delivered in 180 s" : `B's webhooks all out ${fmt(neighbour.noisyDrainedSeconds)} s after the burst`} |`,
    );
  }
  const growth = results.dataGrowth;
  if (growth) {
    for (const [label, figures] of [
      ['empty', growth.empty],
      [`with ${growth.objects} objects of another program`, growth.grown],
    ] as const) {
      lines.push(
        `| data growth, ${label} | GET by id ${fmt(figures.getByIdPerSecond, 0)} req/s; POST /sales ${fmt(figures.salesPerSecond, 0)}/s | ${fmt(figures.eventLatencyMs.p50)} | ${fmt(figures.eventLatencyMs.p99)} | | latencies: affiliate.created → webhook at ${growth.eventRatePerSecond}/s |`,
      );
    }
  }
  lines.push('', ...targets(results));
  lines.push(...tailTable(events));
  lines.push('', '| ratio (same run) | value |', '|---|---:|');
  if (gateway) {
    lines.push(`| throughput gateway / direct | ${fmt(gateway.ratios.throughputGatewayOverDirect, 3)} |`);
    lines.push(`| throughput gateway / nginx | ${fmt(gateway.ratios.throughputGatewayOverNginx, 3)} |`);
    if (gateway.ratios.throughputCandidateOverGateway !== null)
      lines.push(`| throughput gateway (candidate) / gateway | ${fmt(gateway.ratios.throughputCandidateOverGateway, 3)} |`);
    for (const [against, added] of Object.entries(gateway.addedLatencyMs)) {
      lines.push(`| latency the gateway adds ${against}, unloaded p50 / p99 ms | ${fmt(added.p50, 2)} / ${fmt(added.p99, 2)} |`);
      lines.push(
        `| latency the gateway adds ${against}, at ${gateway.connections} connections p50 / p99 ms | ${fmt(added.loadedP50, 2)} / ${fmt(added.loadedP99, 2)} |`,
      );
    }
  }
  if (events) {
    lines.push(
      `| highest affiliate.created rate sustained ${events.sustainWindowSeconds} s without backlog growth | ${events.highestSustainedPerSecond === null ? 'none of the rates tried' : `${events.highestSustainedPerSecond}/s`} |`,
    );
  }
  if (clicks) lines.push(`| clicks/s with identity and dedup ÷ plain {link} clicks/s | ${fmt(clicks.identityOverPlain, 3)} |`);
  if (sales && gateway?.paths.gateway)
    lines.push(`| sales/s ÷ gateway GET req/s | ${fmt(sales.salesPerSecond / gateway.paths.gateway.loaded.requestsPerSecond, 3)} |`);
  if (fan && events?.steps[0])
    lines.push(
      `| fan-out deliveries/s ÷ single-endpoint delivered/s at ${events.steps[0].targetPerSecond}/s | ${fmt(fan.deliveriesPerSecond / events.steps[0].deliveredPerSecond, 2)} |`,
    );

  const measured: Array<[string, WithMemory<object> | undefined]> = [
    ['gateway overhead', gateway],
    ['write path', sales],
    ['click intake', results.clickIntake],
    ['payouts', payouts],
    ['fan-out', fan],
    ['event latency', events],
    ['overload', over],
    ['noisy neighbour', neighbour],
    ['data growth', growth],
  ];
  const scenarios: Array<[string, Record<string, number> | undefined, number | undefined]> = measured.map(([name, scenario]) => [
    name,
    scenario?.peakRssMiB,
    scenario?.peakTotalRssMiB,
  ]);
  const present = scenarios.filter(([, peaks]) => peaks);
  const names = [...new Set(present.flatMap(([, peaks]) => Object.keys(peaks ?? {})))].sort();
  if (names.length > 0) {
    lines.push('', `| peak RSS MiB | ${present.map(([name]) => name).join(' | ')} |`, `|---|${present.map(() => '---:').join('|')}|`);
    for (const name of names)
      lines.push(`| ${name} | ${present.map(([, peaks]) => (peaks?.[name] === undefined ? '' : String(peaks[name]))).join(' | ')} |`);
    lines.push(
      `| **all of the system together** (bench left out) | ${present.map(([, , total]) => (total === undefined ? '' : `**${total}**`)).join(' | ')} |`,
    );
  }
  lines.push(...cpuTable(measured));
  for (const note of results.notes) lines.push('', `Note: ${note}`);
  for (const failure of results.failures) lines.push('', `FAILED: ${failure}`);
  return `${lines.join('\n')}\n`;
}

/**
 * CPU per process and scenario, in % of one core, and the system's and the bench's together over all
 * cores: which process a throughput figure waited for, and whether there was any CPU left to go faster with.
 */
function cpuTable(measured: Array<[string, WithMemory<object> | undefined]>): string[] {
  const present = measured.filter(([, scenario]) => scenario?.cpuPercentOfCore) as Array<[string, WithMemory<object>]>;
  const names = [...new Set(present.flatMap(([, scenario]) => Object.keys(scenario.cpuPercentOfCore ?? {})))].sort();
  if (names.length === 0) return [];
  const lines = [
    '',
    `| CPU, % of one core (mean over the scenario) | ${present.map(([name]) => name).join(' | ')} |`,
    `|---|${present.map(() => '---:').join('|')}|`,
  ];
  for (const name of names)
    lines.push(`| ${name} | ${present.map(([, scenario]) => String(scenario.cpuPercentOfCore?.[name] ?? '')).join(' | ')} |`);
  lines.push(
    `| **system and bench together, % of all cores** | ${present.map(([, scenario]) => `**${scenario.machineBusyPercent ?? ''}**`).join(' | ')} |`,
  );
  return lines;
}

/**
 * What an event of the event scenario cost before issue 29, counted the same way (the driver's command
 * monitoring in every component, bench/README.md): main's outbox and bus, 19.5 database operations,
 * 13.0 of them writes. The issue's ~14 (~10 writes) came from issue 13's profile of two components,
 * counted differently, and is not compared.
 */
const OPERATIONS_PER_EVENT_BEFORE = { operations: 19.5, writes: 13 };

/**
 * The targets of issue 29 beside this run's figures (a benchmark, never a test: nothing fails on
 * a miss). Figures a run did not measure are left out.
 */
function targets(results: BenchResults): string[] {
  const rows: string[] = [];
  const row = (figure: string, measured: string, target: string, met: boolean) =>
    rows.push(`| ${figure} | ${measured} | ${target} | ${met ? 'met' : 'missed'} |`);
  const events = results.eventLatency;
  if (events) {
    const held = events.highestSustainedPerSecond ?? 0;
    row(`highest event → signed webhook rate sustained ${events.sustainWindowSeconds} s`, `${held}/s`, '≥ 300/s (goal 500/s)', held >= 300);
    const at100 = events.steps.find((step) => step.targetPerSecond === 100);
    if (at100) {
      // The issue's target at 100/s is p99 ≤ 250 ms and max ≤ 1 s; the p50 is printed beside them, not a target.
      row(
        'event → webhook at 100/s, p99 (p50)',
        `${fmt(at100.latencyMs.p99)} ms (${fmt(at100.latencyMs.p50)} ms)`,
        'p99 ≤ 250 ms',
        at100.latencyMs.p99 <= 250,
      );
      row('event → webhook at 100/s, max', `${fmt(at100.latencyMs.max)} ms`, 'max ≤ 1,000 ms', at100.latencyMs.max <= 1000);
    }
  }
  const over = results.overload;
  if (over) {
    row(
      `offered ${over.offeredPerSecond}/s for ${fmt(over.seconds, 0)} s: delivered during the overload ÷ sustained rate`,
      `${fmt(over.deliveredOverSustained, 3)} (${fmt(over.deliveredPerSecond)} of ${fmt(over.sustainedPerSecond)}/s)${over.referenceHeld ? '' : '; the reference step did not hold its own rate: no figure'}`,
      '≥ 0.95',
      over.referenceHeld && over.acceptedPerSecond > 0 && over.deliveredOverSustained >= 0.95,
    );
    row(
      `offered ${over.offeredPerSecond}/s: every accepted event delivered within ${over.drainLimitSeconds} s after it`,
      `max ${fmt(over.latencyMs.max / 1000, 1)} s; ${over.undelivered} undelivered`,
      `≤ ${over.drainLimitSeconds} s, 0`,
      over.undelivered === 0 && over.latencyMs.max <= over.drainLimitSeconds * 1000,
    );
    rows.push(
      `| offered ${over.offeredPerSecond}/s: share shed with 503 and Retry-After | ${fmt(over.shedShare * 100, 1)} % (${over.shed}; ${over.failed} failed otherwise${over.failed > 0 ? `: ${failuresOf(over)}` : ''}) | printed | |`,
    );
  }
  const perEvent = events?.operationsPerEvent;
  if (perEvent)
    row(
      'database operations per event (affiliate.created to one webhook), all components (writes)',
      `${fmt(perEvent.total.operations)} (${fmt(perEvent.total.writes)})`,
      `< ${fmt(OPERATIONS_PER_EVENT_BEFORE.operations)} (${fmt(OPERATIONS_PER_EVENT_BEFORE.writes)}), before issue 29, same counting`,
      perEvent.total.operations < OPERATIONS_PER_EVENT_BEFORE.operations,
    );
  const fan = results.fanOut;
  const fanPerEvent = fan?.operationsPerEvent;
  if (fan && fanPerEvent)
    rows.push(
      `| database operations per event of the fan-out (affiliate.created to ${fan.endpoints} webhooks), all components (writes) | ${fmt(fanPerEvent.total.operations)} (${fmt(fanPerEvent.total.writes)}) | printed | |`,
    );
  if (fan) {
    row(
      `fan-out, 1 event type × ${fan.endpoints} endpoints`,
      `${fmt(fan.deliveriesPerSecond, 0)} deliveries/s`,
      '≥ 1,000/s',
      fan.deliveriesPerSecond >= 1000,
    );
    if (fan.peakTotalRssMiB !== undefined)
      row(
        "peak RSS of all the system's processes together, fan-out",
        `${fan.peakTotalRssMiB} MiB`,
        '< 746 MiB (Convoy)',
        fan.peakTotalRssMiB < CONVOY_FAN_OUT_PEAK_MIB,
      );
  }
  const sales = results.writePath;
  if (sales)
    row(
      `POST /sales by code, ${sales.connections} clients, counters exact`,
      `${fmt(sales.salesPerSecond, 0)}/s${sales.counters.match ? '' : ' (counters DO NOT match)'}`,
      '≥ 300/s',
      sales.salesPerSecond >= 300 && sales.counters.match,
    );
  const clicks = results.clickIntake;
  if (clicks) {
    row(
      `POST /clicks with identity and dedup, ${clicks.connections} clients, counts exact`,
      `${fmt(clicks.clicksPerSecond, 0)}/s${clicks.counters.match ? '' : ' (counts DO NOT match)'}`,
      `≥ ${CLICK_TARGET_PER_SECOND.toLocaleString('en')}/s`,
      clicks.clicksPerSecond >= CLICK_TARGET_PER_SECOND && clicks.counters.match,
    );
  }
  const neighbour = results.noisyNeighbour;
  if (neighbour)
    row(
      `noisy neighbour: A's webhook p99 during B's ${neighbour.burstEvents}-event burst`,
      `${fmt(neighbour.quietLatencyMs.p99)} ms`,
      '≤ 1,000 ms',
      neighbour.quietLatencyMs.p99 <= 1000,
    );
  const growth = results.dataGrowth;
  if (growth) {
    row(
      `data growth, GET by id (${growth.objects} objects of another program vs empty)`,
      fmt(growth.ratios.getById, 3),
      '≥ 0.9',
      growth.ratios.getById >= 0.9,
    );
    row('data growth, POST /sales by code', fmt(growth.ratios.salesByCode, 3), '≥ 0.9', growth.ratios.salesByCode >= 0.9);
    row('data growth, event → webhook p50', fmt(growth.ratios.eventToWebhookP50, 3), '≥ 0.9', growth.ratios.eventToWebhookP50 >= 0.9);
  }
  const payouts = results.payoutRun;
  if (payouts)
    row(
      `payout run over ${payouts.sales} due commissions of ${payouts.affiliates} affiliates (POST /payouts until empty)`,
      `${fmt(payouts.run.seconds, 2)} s${payouts.correct ? '' : ' (NOT each in exactly one payout)'}`,
      '≤ 1 s',
      payouts.run.seconds <= 1 && payouts.correct,
    );
  const ratio = results.gatewayOverhead?.ratios.throughputGatewayOverNginx;
  if (ratio !== undefined && ratio !== null) row('gateway / nginx throughput, GET by id', fmt(ratio, 3), '≥ 0.9', ratio >= 0.9);
  return rows.length > 0 ? ['| figure (issue 29 targets) | this run | target | |', '|---|---:|---:|---|', ...rows] : [];
}

/** Where the time of the slowest 1% went at the traced rate, hop by hop, beside the GC pauses of the same step. */
function tailTable(events: BenchResults['eventLatency']): string[] {
  const step = events?.steps.find((each) => each.tail);
  const tail = step?.tail;
  if (!step || !tail) return [];
  const lines = [
    '',
    `| slowest ${tail.slowest} of ${tail.traced} traced events at ${step.targetPerSecond}/s, per hop | median ms | max ms | median of all traced ms |`,
    '|---|---:|---:|---:|',
    ...tail.hops.map((hop) => `| ${hop.hop} | ${fmt(hop.medianSlowestMs)} | ${fmt(hop.maxSlowestMs)} | ${fmt(hop.p50AllMs)} |`),
  ];
  const paused = (step.gcPauses ?? []).filter((summary) => summary.longest.length > 0);
  if (paused.length > 0)
    lines.push(
      '',
      `GC pauses in that step (longest, count, total): ${paused.map((summary) => `${summary.process} ${fmt(summary.longest[0]?.ms)} ms, ${summary.pauses}, ${summary.totalMs} ms`).join('; ')}.`,
    );
  return lines;
}

const START = '<!-- latest-results:start -->';
const END = '<!-- latest-results:end -->';

export function writeResults(results: BenchResults, paths: { json: string; history: string; readme?: string }): string {
  const table = markdown(results);
  mkdirSync(dirname(paths.json), { recursive: true });
  writeFileSync(paths.json, `${JSON.stringify(results, null, 2)}\n`);
  if (!existsSync(paths.history))
    writeFileSync(
      paths.history,
      '# Benchmark results\n\nAppended by `npm run bench`, newest last. Compare ratios, not absolute numbers, across machines.\n',
    );
  appendFileSync(paths.history, `\n${table}`);
  if (paths.readme && existsSync(paths.readme)) {
    const readme = readFileSync(paths.readme, 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    if (start >= 0 && end > start) writeFileSync(paths.readme, `${readme.slice(0, start + START.length)}\n${table}${readme.slice(end)}`);
  }
  return table;
}
