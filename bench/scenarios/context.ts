import type { BenchSystem } from '../lib/bench-system';
import type { DatabaseOperations } from '../lib/db-operations';
import type { Plan } from '../lib/plan';
import { PeakMemory } from '../lib/process-memory';
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
  /** The database operations every component sends, counted in each (lib/db-operations.ts). */
  operations?: DatabaseOperations;
};

/** Runs `body` while recording the peak RSS of every process of the system. */
export async function withPeakMemory<T>(
  context: ScenarioContext,
  body: () => Promise<T>,
): Promise<T & { peakRssMiB: Record<string, number> }> {
  const memory = new PeakMemory(() => context.bench.processes(new Map(context.extraProcesses)));
  memory.start();
  try {
    const result = await body();
    return { ...result, peakRssMiB: memory.stop() };
  } catch (error) {
    memory.stop();
    throw error;
  }
}
