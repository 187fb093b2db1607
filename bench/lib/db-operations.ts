import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { round, sleep } from './stats';

/** Database commands of each component, by command name. */
export type OperationCounts = Record<string, Record<string, number>>;

/** Commands that change data; the others that read are reads; the rest (hello, ping, endSessions) are not operations on data. */
const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'create', 'createIndexes', 'drop', 'dropIndexes']);
const READS = new Set(['find', 'getMore', 'aggregate', 'count', 'distinct', 'listCollections', 'listIndexes']);

export type OperationsPerEvent = {
  events: number;
  /** Per component and in total: operations (reads + writes) and writes, per event. */
  perComponent: Record<string, { operations: number; writes: number }>;
  total: { operations: number; writes: number };
  /** Per command name, all components together, per event. */
  byCommand: Record<string, number>;
};

/**
 * The database operations the components send, counted by the driver's command monitoring in each
 * component (lib/operation-counter-preload.js), read from the files the preload keeps up to date.
 */
export class DatabaseOperations {
  constructor(readonly directory: string) {}

  /** What the preload loads: NODE_OPTIONS and its directory. */
  env(): Record<string, string> {
    return { BENCH_OPERATION_COUNT_DIR: this.directory };
  }

  static preload(): string {
    return `--require ${join(__dirname, 'operation-counter-preload.js')}`;
  }

  /** The counts now, summed over each component's processes (a restart's too); after the preloads' next write. */
  async snapshot(): Promise<OperationCounts> {
    await sleep(500);
    const counts: OperationCounts = {};
    for (const file of readdirSync(this.directory).filter((name) => name.endsWith('.json'))) {
      try {
        const each = JSON.parse(readFileSync(join(this.directory, file), 'utf8')) as {
          component: string;
          database: Record<string, number>;
        };
        const component = (counts[each.component] ??= {});
        // The preload counts by "<command> <collection>"; operations per event count by command.
        for (const [named, count] of Object.entries(each.database)) {
          const [command = named] = named.split(' ');
          component[command] = (component[command] ?? 0) + count;
        }
      } catch {
        // Unreadable this instant: skipped once. Never half written: the preload writes aside (`.json.tmp`) and renames.
      }
    }
    return counts;
  }

  /**
   * The operations between two snapshots, per event. `background` is what the components did over an
   * idle window (sweeps, polls, health reads), scaled to the measured window and taken off.
   */
  static perEvent(
    before: OperationCounts,
    after: OperationCounts,
    events: number,
    background?: { before: OperationCounts; after: OperationCounts; scale: number },
  ): OperationsPerEvent {
    const perComponent: OperationsPerEvent['perComponent'] = {};
    const byCommand: Record<string, number> = {};
    let operations = 0;
    let writes = 0;
    for (const [component, counts] of Object.entries(after)) {
      let componentOperations = 0;
      let componentWrites = 0;
      for (const [command, count] of Object.entries(counts)) {
        const idle = background ? (background.after[component]?.[command] ?? 0) - (background.before[component]?.[command] ?? 0) : 0;
        const delta = count - (before[component]?.[command] ?? 0) - idle * (background?.scale ?? 0);
        if (delta <= 0 || !(WRITES.has(command) || READS.has(command))) continue;
        componentOperations += delta;
        if (WRITES.has(command)) componentWrites += delta;
        byCommand[command] = (byCommand[command] ?? 0) + delta;
      }
      if (componentOperations === 0) continue;
      perComponent[component] = { operations: round(componentOperations / events), writes: round(componentWrites / events) };
      operations += componentOperations;
      writes += componentWrites;
    }
    for (const command of Object.keys(byCommand)) byCommand[command] = round((byCommand[command] ?? 0) / events);
    return { events, perComponent, total: { operations: round(operations / events), writes: round(writes / events) }, byCommand };
  }
}
