import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { ProfileSummary } from './cpu-profile';
import type { EventLatency } from '../scenarios/event-latency';
import type { FanOut } from '../scenarios/fan-out';
import type { GatewayOverhead } from '../scenarios/gateway-overhead';
import type { WritePath } from '../scenarios/write-path';

type WithMemory<T> = T & { peakRssMiB: Record<string, number> };

export type BenchResults = {
  startedAt: string;
  mode: 'full' | 'quick';
  seconds: number;
  machine: Record<string, string | number>;
  settings: Record<string, string>;
  gatewayOverhead?: WithMemory<GatewayOverhead>;
  writePath?: WithMemory<WritePath>;
  fanOut?: WithMemory<FanOut>;
  eventLatency?: WithMemory<EventLatency>;
  profiles?: ProfileSummary[];
  failures: string[];
  notes: string[];
};

export function describeMachine(root: string, nginx: string | undefined): Record<string, string | number> {
  const commit = (() => {
    try {
      return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const osName = existsSync('/etc/os-release') ? (/^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'Linux') : process.platform;
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
      `| POST /sales by promo code | ${fmt(sales.salesPerSecond, 0)} sales/s | ${fmt(sales.run.latencyMs.p50, 1)} | ${fmt(sales.run.latencyMs.p99, 1)} | ${sales.run.errors + sales.run.non2xx} | ${sales.connections} connections, ${fmt(sales.run.seconds, 0)} s; counters ${c.match ? 'match' : 'DO NOT match'} the 200s (${c.ok200} 200s, code ${c.promotionalCodeTimesRedeemed}, coupon ${c.couponTimesRedeemed}) |`,
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
  const fan = results.fanOut;
  if (fan) {
    lines.push(
      `| fan-out: 1 event type × ${fan.endpoints} endpoints | ${fmt(fan.deliveriesPerSecond, 0)} deliveries/s | | | ${fan.expectedDeliveries - fan.delivered} | ${fan.events} events, ${fan.delivered}/${fan.expectedDeliveries} delivered in ${fmt(fan.seconds, 1)} s |`,
    );
  }
  lines.push('', '| ratio (same run) | value |', '|---|---:|');
  if (gateway) {
    lines.push(`| throughput gateway / direct | ${fmt(gateway.ratios.throughputGatewayOverDirect, 3)} |`);
    lines.push(`| throughput gateway / nginx | ${fmt(gateway.ratios.throughputGatewayOverNginx, 3)} |`);
    if (gateway.ratios.throughputCandidateOverGateway !== null) lines.push(`| throughput gateway (candidate) / gateway | ${fmt(gateway.ratios.throughputCandidateOverGateway, 3)} |`);
    for (const [against, added] of Object.entries(gateway.addedLatencyMs)) {
      lines.push(`| latency the gateway adds ${against}, unloaded p50 / p99 ms | ${fmt(added.p50, 2)} / ${fmt(added.p99, 2)} |`);
      lines.push(`| latency the gateway adds ${against}, at ${gateway.connections} connections p50 / p99 ms | ${fmt(added.loadedP50, 2)} / ${fmt(added.loadedP99, 2)} |`);
    }
  }
  if (events) {
    lines.push(`| highest affiliate.created rate sustained ${events.sustainWindowSeconds} s without backlog growth | ${events.highestSustainedPerSecond === null ? 'none of the rates tried' : `${events.highestSustainedPerSecond}/s`} |`);
  }
  if (sales && gateway?.paths.gateway) lines.push(`| sales/s ÷ gateway GET req/s | ${fmt(sales.salesPerSecond / gateway.paths.gateway.loaded.requestsPerSecond, 3)} |`);
  if (fan && events?.steps[0]) lines.push(`| fan-out deliveries/s ÷ single-endpoint delivered/s at ${events.steps[0].targetPerSecond}/s | ${fmt(fan.deliveriesPerSecond / events.steps[0].deliveredPerSecond, 2)} |`);

  const scenarios: Array<[string, Record<string, number> | undefined]> = [
    ['gateway overhead', gateway?.peakRssMiB],
    ['write path', sales?.peakRssMiB],
    ['fan-out', fan?.peakRssMiB],
    ['event latency', events?.peakRssMiB],
  ];
  const present = scenarios.filter(([, peaks]) => peaks);
  const names = [...new Set(present.flatMap(([, peaks]) => Object.keys(peaks ?? {})))].sort();
  if (names.length > 0) {
    lines.push('', `| peak RSS MiB | ${present.map(([name]) => name).join(' | ')} |`, `|---|${present.map(() => '---:').join('|')}|`);
    for (const name of names) lines.push(`| ${name} | ${present.map(([, peaks]) => (peaks?.[name] === undefined ? '' : String(peaks[name]))).join(' | ')} |`);
  }
  for (const note of results.notes) lines.push('', `Note: ${note}`);
  for (const failure of results.failures) lines.push('', `FAILED: ${failure}`);
  return `${lines.join('\n')}\n`;
}

const START = '<!-- latest-results:start -->';
const END = '<!-- latest-results:end -->';

export function writeResults(results: BenchResults, paths: { json: string; history: string; readme?: string }): string {
  const table = markdown(results);
  mkdirSync(dirname(paths.json), { recursive: true });
  writeFileSync(paths.json, `${JSON.stringify(results, null, 2)}\n`);
  if (!existsSync(paths.history)) writeFileSync(paths.history, '# Benchmark results\n\nAppended by `npm run bench`, newest last. Compare ratios, not absolute numbers, across machines.\n');
  appendFileSync(paths.history, `\n${table}`);
  if (paths.readme && existsSync(paths.readme)) {
    const readme = readFileSync(paths.readme, 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    if (start >= 0 && end > start) writeFileSync(paths.readme, `${readme.slice(0, start + START.length)}\n${table}${readme.slice(end)}`);
  }
  return table;
}
