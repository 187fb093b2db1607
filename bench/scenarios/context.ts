import type { BenchSystem } from '../lib/bench-system';
import type { DatabaseOperations } from '../lib/db-operations';
import type { Plan } from '../lib/plan';
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

/** Runs `body` while recording the peak RSS of every process of the system, and of all of them together. */
export async function withPeakMemory<T>(
  context: ScenarioContext,
  body: () => Promise<T>,
): Promise<T & { peakRssMiB: Record<string, number>; peakTotalRssMiB: number }> {
  const memory = new PeakMemory(() => context.bench.processes(new Map(context.extraProcesses)));
  memory.start();
  try {
    const result = await body();
    const peakRssMiB = memory.stop();
    return { ...result, peakRssMiB, peakTotalRssMiB: memory.total() };
  } catch (error) {
    memory.stop();
    throw error;
  }
}
