import CircuitBreaker from 'opossum';
import type { Logger } from '../logger';
import type { CircuitCounts, CircuitMetrics } from '../metrics';

export type KeyedCircuitOptions = Omit<CircuitBreaker.Options, 'name'> & {
  /** Names the circuits and the log lines: `<name>:<key>`. */
  name: string;
  /** What a key is, for the log lines (`programId`, `endpointId`). */
  keyName: string;
  /** What an opened circuit means for the caller, for the log line. */
  openedMeans: string;
  /** Circuits kept at most; beyond this, closed circuits (which remember nothing worth keeping) are dropped. */
  maxKeys?: number;
  /** Counts of circuits by state under `name`, never a series per key: keys are programs or endpoints. */
  metrics?: CircuitMetrics;
};

/**
 * One circuit breaker per key around the same action. Whose circuit it is decides who can open it:
 * a timeout or a failed attempt may be one caller's doing (a slow subscriber, a heavy query), so
 * circuits are kept per program between our components and per endpoint towards subscribers, and
 * nobody can open a circuit for anybody else. A dependency that is really down opens each key's
 * circuit after a few of that key's calls.
 */
export class KeyedCircuits<Args extends unknown[], Result> {
  private readonly circuits = new Map<string, CircuitBreaker<Args, Result>>();
  private readonly untrack: () => void;

  constructor(
    private readonly action: (...args: Args) => Promise<Result>,
    private readonly options: KeyedCircuitOptions,
    private readonly logger: Logger,
  ) {
    this.untrack = options.metrics?.track(options.name, () => this.counts()) ?? (() => undefined);
  }

  /** Circuits by state, counted when scraped: at most `maxKeys` of them, all in memory. */
  counts(): CircuitCounts {
    const counts = { open: 0, halfOpen: 0, closed: 0 };
    for (const circuit of this.circuits.values()) {
      if (circuit.halfOpen) counts.halfOpen += 1;
      else if (circuit.opened) counts.open += 1;
      else counts.closed += 1;
    }
    return counts;
  }

  of(key: string): CircuitBreaker<Args, Result> {
    let circuit = this.circuits.get(key);
    if (circuit) return circuit;
    if (this.circuits.size >= (this.options.maxKeys ?? 1000)) {
      for (const [idleKey, idle] of this.circuits) if (idle.closed) this.forget(idleKey);
    }
    const { keyName, openedMeans, maxKeys: _maxKeys, metrics, ...breakerOptions } = this.options;
    circuit = new CircuitBreaker(this.action, { ...breakerOptions, name: `${this.options.name}:${key}` });
    const about = { upstream: this.options.name, [keyName]: key };
    circuit.on('open', () => {
      metrics?.opened(this.options.name);
      this.logger.warn(about, `circuit opened: ${openedMeans}`);
    });
    circuit.on('halfOpen', () => this.logger.info(about, 'circuit half-open: trying again'));
    circuit.on('close', () => this.logger.info(about, 'circuit closed'));
    this.circuits.set(key, circuit);
    return circuit;
  }

  /** Whether the key's circuit is open now (a key never seen has a closed one). */
  isOpen(key: string): boolean {
    return this.circuits.get(key)?.opened ?? false;
  }

  forget(key: string): void {
    this.circuits.get(key)?.shutdown();
    this.circuits.delete(key);
  }

  shutdown(): void {
    for (const key of [...this.circuits.keys()]) this.forget(key);
    this.untrack();
  }
}
