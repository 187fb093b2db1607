import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Peak resident memory of every process of the system, per scenario. The processes are found by
 * walking this process's descendants in /proc (the harness does not expose pids) and named from
 * their command line. Peaks come from VmHWM after resetting it through /proc/<pid>/clear_refs, and
 * from VmRSS sampled every 200 ms, whichever is higher (the reset is refused on some kernels).
 */
export type NamedProcess = { pid: number; name: string };

const COMPONENT_PATHS: Array<[RegExp, string]> = [
  [/services\/coupon\/dist\/start\.js/, 'coupon'],
  [/services\/affiliate\/dist\/start\.js/, 'affiliate'],
  [/services\/referral\/dist\/start\.js/, 'referral'],
  [/services\/sale\/dist\/start\.js/, 'sale'],
  [/services\/webhook-dispatcher\/dist\/start\.js/, 'webhook-dispatcher'],
  [/gateway\/dist\/start\.js/, 'gateway'],
];

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The fields of /proc/<pid>/stat after the command name, from the 3rd (the state) on; undefined once
 * the process has gone. The name (2nd field) may hold spaces and parentheses: fields resume after the last ')'.
 */
export function statFields(pid: number): string[] | undefined {
  const stat = readProc(pid, 'stat');
  return stat ? stat.slice(stat.lastIndexOf(')') + 2).split(' ') : undefined;
}

function parentOf(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : undefined;
}

function nameOf(pid: number, extraNames: ReadonlyMap<number, string>): string | undefined {
  const given = extraNames.get(pid);
  if (given) return given;
  const cmdline = (readProc(pid, 'cmdline') ?? '').split('\0').join(' ');
  for (const [pattern, name] of COMPONENT_PATHS) if (pattern.test(cmdline)) return name;
  if (/\bMongoLocal\b/.test(cmdline)) return 'mongodb (mongo-java-server)';
  if (/beam\.smp/.test(cmdline)) return 'rabbitmq';
  if (/^nginx: master/.test(cmdline)) return 'nginx master';
  if (/^nginx: worker/.test(cmdline)) return 'nginx worker';
  return undefined;
}

/** Every named descendant of this process, plus the processes named explicitly (Redis, candidates). */
export function systemProcesses(extra: ReadonlyMap<number, string> = new Map()): NamedProcess[] {
  const pids = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
  const parents = new Map(pids.map((pid) => [pid, parentOf(pid)]));
  const isDescendant = (pid: number): boolean => {
    for (let current = parents.get(pid), hops = 0; current !== undefined && hops < 64; current = parents.get(current), hops++) {
      if (current === process.pid) return true;
    }
    return false;
  };
  const found: NamedProcess[] = [{ pid: process.pid, name: 'bench (load generator, subscriber)' }];
  for (const pid of pids) {
    if (pid === process.pid || !(isDescendant(pid) || extra.has(pid))) continue;
    const name = nameOf(pid, extra);
    if (name) found.push({ pid, name });
  }
  return found;
}

function kilobytes(status: string | undefined, field: 'VmRSS' | 'VmHWM'): number {
  const match = status ? new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status) : null;
  return match ? Number(match[1]) : 0;
}

export class PeakMemory {
  private readonly peaks = new Map<number, number>();
  private readonly resetWorked = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private watched: NamedProcess[] = [];
  /** The highest sum of the system's processes' VmRSS in one sample (the bench's own process left out). */
  private peakTotal = 0;

  constructor(private readonly processes: () => NamedProcess[]) {}

  start(): void {
    this.watched = this.processes();
    for (const { pid } of this.watched) {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        this.resetWorked.add(pid);
      } catch {
        // not permitted here: the sampled VmRSS alone gives the peak
      }
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), 200);
  }

  /** Peak RSS in MiB by process name (several processes of one name, e.g. nginx workers: the largest). */
  stop(): Record<string, number> {
    clearInterval(this.timer);
    this.sample();
    const result: Record<string, number> = {};
    for (const { pid, name } of this.watched) {
      const highWater = this.resetWorked.has(pid) ? kilobytes(readProc(pid, 'status'), 'VmHWM') : 0;
      const peak = Math.max(this.peaks.get(pid) ?? 0, highWater);
      if (peak > 0) result[name] = Math.max(result[name] ?? 0, Math.round(peak / 1024));
    }
    return result;
  }

  /**
   * Peak RSS of all the system's processes together in MiB: the highest sum seen at one instant, so
   * peaks of different processes at different times are not added up. The bench's own process (load
   * generator and subscriber) is not part of the system and is left out.
   */
  total(): number {
    return Math.round(this.peakTotal / 1024);
  }

  private sample(): void {
    let total = 0;
    for (const { pid } of this.watched) {
      const rss = kilobytes(readProc(pid, 'status'), 'VmRSS');
      if (rss > (this.peaks.get(pid) ?? 0)) this.peaks.set(pid, rss);
      if (pid !== process.pid) total += rss;
    }
    this.peakTotal = Math.max(this.peakTotal, total);
  }
}
