import { availableParallelism } from 'node:os';
import { statFields, type NamedProcess } from './process-memory';

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ): 100 on every Linux the bench runs on. */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time of a process so far, in ticks; undefined once it has gone. */
function cpuTicks(pid: number): number | undefined {
  const fields = statFields(pid);
  // utime and stime, the 14th and 15th fields of the line (indexes 11 and 12 of what follows the name).
  return fields ? Number(fields[11]) + Number(fields[12]) : undefined;
}

/**
 * Where the machine's CPU went during a scenario, per process of the system: CPU time over the
 * scenario's wall time, in % of one core (two busy cores are 200 %). Beside the targets it says
 * which process a throughput figure waits for, and how much of the cores the system and the bench's
 * own load generator took together (processes outside the run, such as another job on the machine,
 * are not counted: a figure near 100 % says the run had the machine to itself and used it all).
 */
export class CpuShare {
  private readonly startTicks = new Map<number, number>();
  private startedAt = 0;
  private watched: NamedProcess[] = [];

  constructor(private readonly processes: () => NamedProcess[]) {}

  start(): void {
    this.watched = this.processes();
    this.startedAt = performance.now();
    for (const { pid } of this.watched) {
      const ticks = cpuTicks(pid);
      if (ticks !== undefined) this.startTicks.set(pid, ticks);
    }
  }

  /** % of one core per process name (several processes of one name, e.g. nginx workers: added up), and all of them over all cores, in %. */
  stop(): { percentOfCore: Record<string, number>; machineBusyPercent: number } {
    const seconds = (performance.now() - this.startedAt) / 1000;
    const percentOfCore: Record<string, number> = {};
    let all = 0;
    for (const { pid, name } of this.watched) {
      const before = this.startTicks.get(pid);
      const after = cpuTicks(pid);
      if (before === undefined || after === undefined || seconds <= 0) continue;
      const percent = ((after - before) / TICKS_PER_SECOND / seconds) * 100;
      percentOfCore[name] = (percentOfCore[name] ?? 0) + percent;
      all += percent;
    }
    for (const name of Object.keys(percentOfCore)) percentOfCore[name] = Math.round(percentOfCore[name] ?? 0);
    return { percentOfCore, machineBusyPercent: Math.round(all / availableParallelism()) };
  }
}
