import type { BenchSystem } from '../lib/bench-system';
import type { DatabaseOperations } from '../lib/db-operations';
import type { Plan } from '../lib/plan';
import { CpuShare } from '../lib/process-cpu';
import { PeakMemory } from '../lib/process-memory';
import type { TraceCollector } from '../lib/trace-collector';
import type { WebhookReceiver } from '../lib/webhook-receiver';

export type ScenarioContext = {
  bench: BenchSystem;
  receiver: WebhookReceiver;
  plan: Plan;
  /** Seconds left of the run's budget. */
  remainingSeconds: () => number;
  log: (line: string) => void;
  /** Processes not started by this run that belong to the system (the local Redis). */
  extraProcesses: Map<number, string>;
  /** Receives the spans of the requests the bench sends with a sampled traceparent. */
  traces: TraceCollector;
  /** The GC log of the run's database server (its JVM's -Xlog:gc). */
  databaseGcLog: string;
  /** The database operations every component sends, counted in each (lib/db-operations.ts). */
  operations?: DatabaseOperations;
};

/** What a scenario used of the machine: peak RSS per process and of all together, and CPU per process. */
export type ResourceUse = {
  peakRssMiB: Record<string, number>;
  peakTotalRssMiB: number;
  /** CPU time over the scenario's wall time per process, in % of one core (lib/process-cpu.ts). */
  cpuPercentOfCore: Record<string, number>;
  /** The system's processes' CPU time and the bench's own, over all cores' time, in %. */
  machineBusyPercent: number;
};

/** Runs `body` while recording the peak RSS of every process of the system, of all of them together, and their CPU. */
export async function withPeakMemory<T>(context: ScenarioContext, body: () => Promise<T>): Promise<T & ResourceUse> {
  const processes = () => context.bench.processes(new Map(context.extraProcesses));
  const memory = new PeakMemory(processes);
  const cpu = new CpuShare(processes);
  memory.start();
  cpu.start();
  try {
    const result = await body();
    const { percentOfCore, machineBusyPercent } = cpu.stop();
    const peakRssMiB = memory.stop();
    return { ...result, peakRssMiB, peakTotalRssMiB: memory.total(), cpuPercentOfCore: percentOfCore, machineBusyPercent };
  } catch (error) {
    memory.stop();
    throw error;
  }
}
