import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
};
type CpuProfile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

export type ProfileSummary = {
  file: string;
  component: string;
  /** CPU time sampled, and the share of it in each of the hottest functions (self time). */
  sampledSeconds: number;
  hottest: Array<{ selfPercent: number; function: string; where: string }>;
  /** Self time grouped by package (node_modules/<name>, node: internals, or this repository). */
  byPackage: Array<{ selfPercent: number; package: string }>;
};

const where = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/work\/main\//, '');

function packageOf(url: string): string {
  if (!url) return '(native / idle / gc)';
  if (url.startsWith('node:')) return 'node core';
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1] as string;
  const local = /\/(services\/[^/]+|gateway|contracts)\//.exec(url);
  return local ? (local[1] as string) : 'other';
}

/**
 * Reads the .cpuprofile files that `--cpu-prof` wrote when the components exited, and names the
 * functions and packages that took the most CPU in each component.
 */
export function summarizeProfiles(directory: string, componentOfPid: (pid: number) => string | undefined): ProfileSummary[] {
  const summaries: ProfileSummary[] = [];
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'))) {
    // Node names them CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile
    const pid = Number(/^CPU\.\d+\.\d+\.(\d+)\./.exec(file)?.[1]);
    const profile = JSON.parse(readFileSync(join(directory, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const selfMicros = new Map<number, number>();
    profile.samples.forEach((id, index) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
    let total = 0;
    const byFunction = new Map<string, { micros: number; function: string; where: string }>();
    const byPackage = new Map<string, number>();
    for (const [id, micros] of selfMicros) {
      const frame = byId.get(id)?.callFrame;
      if (!frame || frame.functionName === '(idle)' || frame.functionName === '(program)') continue;
      total += micros;
      const name = frame.functionName || '(anonymous)';
      const location = frame.url ? `${where(frame.url)}:${frame.lineNumber + 1}` : '';
      const key = `${name} ${location}`;
      const entry = byFunction.get(key) ?? { micros: 0, function: name, where: location };
      entry.micros += micros;
      byFunction.set(key, entry);
      const pkg = frame.functionName === '(garbage collector)' ? '(garbage collector)' : packageOf(frame.url);
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
    }
    const percent = (micros: number) => Math.round((1000 * micros) / Math.max(1, total)) / 10;
    summaries.push({
      file,
      component: componentOfPid(pid) ?? `pid ${pid}`,
      sampledSeconds: Math.round(total / 1e4) / 100,
      hottest: [...byFunction.values()]
        .sort((a, b) => b.micros - a.micros)
        .slice(0, 12)
        .map((entry) => ({ selfPercent: percent(entry.micros), function: entry.function, where: entry.where })),
      byPackage: [...byPackage.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 10)
        .map(([name, micros]) => ({ selfPercent: percent(micros), package: name })),
    });
  }
  return summaries.sort((a, b) => b.sampledSeconds - a.sampledSeconds);
}
