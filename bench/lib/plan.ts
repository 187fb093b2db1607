/** How long each scenario runs: the full run takes about 10 minutes on 2 cores, --quick fits 2 (CI). */
export type Plan = {
  mode: 'full' | 'quick';
  /**
   * Seconds into the run by which the event-rate search must be done (it only takes steps that fit);
   * fan-out comes after it, so the full run stays under its 10 minutes. At 480 s no search step fitted
   * any more after the 100 and 500/s steps (478 s runs on 2026-11-26), so the highest sustained rate
   * could only read 100 or 500/s: 560 s leaves room for one step between them.
   */
  budgetSeconds: number;
  gateway: { warmupSeconds: number; rounds: number; seconds: number; connections: number; unloadedSeconds: number };
  sales: { warmupSeconds: number; seconds: number; connections: number };
  /** POST /clicks with identity and deduplication on. */
  clicks: { warmupSeconds: number; seconds: number; connections: number };
  events: { warmupSeconds: number; seconds: number; rates: number[]; drainTimeoutSeconds: number; search: boolean };
  fanOut: { endpoints: number; events: number; timeoutSeconds: number };
  /** Program B's burst while program A sends at a steady rate. */
  noisyNeighbour: { burstEvents: number; quietRatePerSecond: number; drainTimeoutSeconds: number };
  /** Each hot path measured for `seconds`, before and after `objects` of another program are stored. */
  dataGrowth: { seconds: number; connections: number; objects: number; eventRatePerSecond: number };
  /** One payout run over `sales` due commissions of `affiliates` affiliates. */
  payouts: { affiliates: number; sales: number };
  /**
   * POST /affiliates offered at `offeredPerSecond` for `seconds`, far past capacity; every accepted
   * event should be delivered within `drainLimitSeconds` after. Without the event scenario in the
   * run, a step at `referencePerSecond` for `referenceSeconds` gives the rate delivery is held against.
   */
  overload: { offeredPerSecond: number; seconds: number; drainLimitSeconds: number; referencePerSecond: number; referenceSeconds: number };
};

export const FULL: Plan = {
  mode: 'full',
  budgetSeconds: 560,
  gateway: { warmupSeconds: 3, rounds: 3, seconds: 4, connections: 32, unloadedSeconds: 2 },
  sales: { warmupSeconds: 5, seconds: 30, connections: 64 },
  clicks: { warmupSeconds: 3, seconds: 30, connections: 64 },
  events: { warmupSeconds: 3, seconds: 60, rates: [100, 500], drainTimeoutSeconds: 20, search: true },
  fanOut: { endpoints: 50, events: 100, timeoutSeconds: 45 },
  noisyNeighbour: { burstEvents: 10_000, quietRatePerSecond: 20, drainTimeoutSeconds: 30 },
  dataGrowth: { seconds: 8, connections: 16, objects: 100_000, eventRatePerSecond: 20 },
  payouts: { affiliates: 50, sales: 1_000 },
  overload: { offeredPerSecond: 500, seconds: 60, drainLimitSeconds: 60, referencePerSecond: 100, referenceSeconds: 20 },
};

export const QUICK: Plan = {
  mode: 'quick',
  budgetSeconds: 110,
  gateway: { warmupSeconds: 1, rounds: 1, seconds: 3, connections: 32, unloadedSeconds: 2 },
  sales: { warmupSeconds: 1, seconds: 5, connections: 64 },
  clicks: { warmupSeconds: 1, seconds: 5, connections: 64 },
  events: { warmupSeconds: 1, seconds: 5, rates: [100, 500], drainTimeoutSeconds: 8, search: false },
  fanOut: { endpoints: 50, events: 10, timeoutSeconds: 20 },
  noisyNeighbour: { burstEvents: 500, quietRatePerSecond: 20, drainTimeoutSeconds: 10 },
  dataGrowth: { seconds: 2, connections: 16, objects: 5_000, eventRatePerSecond: 20 },
  payouts: { affiliates: 5, sales: 50 },
  overload: { offeredPerSecond: 500, seconds: 10, drainLimitSeconds: 20, referencePerSecond: 100, referenceSeconds: 5 },
};
