/** A place in line: `leave` gives it up (false when its turn had already come). */
export type Place = { leave: () => boolean };

/** A piece of work whose turn came; hand it back with `done` when it ends. */
export type Turn<Item> = { program: string; lane: string; key: string | undefined; item: Item };

export type TurnsOptions<Item> = {
  /** Pieces running at once, all programs together. */
  concurrency: number;
  /** Pieces of one program running at once; the rest of its work waits even when there is room. */
  perProgram?: number;
  /**
   * Pieces of one lane running at once, but for those that gave their lane's place back
   * (`leaveLane`). A lane is a finer line within a program (the webhook scheduler's endpoint): a
   * lane at its bound is skipped in one step, however much of it waits.
   */
  perLane?: number;
  /**
   * Most pieces handed over in one turn (default 1). With more, `onTurn` gets up to that many at
   * once, still taken one program at a time in turn, so their work can share round trips (the
   * outbox relay publishes and clears a batch of documents together).
   */
  batch?: number;
  /**
   * Batches running at once (default: no bound but `concurrency`). Bounded, the pieces that arrive
   * while the batches run gather into the next one, as a group commit's do.
   */
  maxBatches?: number;
  /** Starts the work of the pieces whose turn came; each is handed back with `done`. */
  onTurn: (turns: Turn<Item>[]) => void;
  /** Told the counts after every change (metrics). */
  report?: (running: number, queued: number) => void;
};

/**
 * Work of many programs, taken in turn: the platform's one "programs take turns" worker (admission
 * control, the event consumers' fan-out through FairShare, the outbox relay; lanes are for the webhook scheduler's endpoints).
 * At most `concurrency` pieces run at once, at most `perProgram` of one program and `perLane` of one
 * lane (a piece may give its lane's place back before it is done: `leaveLane`); waiting pieces are taken one program at a time, each program's in arrival order, and within a
 * program one lane at a time. So one program's burst queues behind itself, not in front of every
 * other program's work, and never takes every running place; a slow lane holds only its own places.
 *
 * Pieces may carry a key: a piece added under a key that already waits takes the waiting one's place
 * instead of queueing twice (`has` and `isRunning` tell the callers what the key is doing). Added
 * under a key that is running (and not waiting), it queues as a piece of its own, whose turn may come
 * while the first still runs; the key counts as running until both are done. A caller that must not
 * run one key twice at once asks `isRunning` first and adds the piece once the first is done, as the
 * outbox relay does.
 */
export class Turns<Item> {
  /** Waiting pieces per program, then per lane, in arrival order; programs and lanes in the Maps' (round-robin) order. */
  private readonly waiting = new Map<string, Map<string, Turn<Item>[]>>();
  private readonly waitingBy = new Map<string, number>();
  private readonly waitingKeys = new Map<string, Turn<Item>>();
  /** Running pieces per key: a key re-added while it runs can have two. */
  private readonly runningKeys = new Map<string, number>();
  private readonly runningBy = new Map<string, number>();
  private readonly runningByLane = new Map<string, number>();
  private running = 0;
  private queued = 0;
  /** Pieces of each running batch not done yet; the batch ends with its last one. */
  private readonly batchOf = new WeakMap<Turn<Item>, { left: number }>();
  private batches = 0;
  /** The pieces whose turn came and that are not done yet. */
  private readonly runningTurns = new WeakSet<Turn<Item>>();
  /** Running pieces that gave their lane's place back already (`leaveLane`). */
  private readonly leftLane = new WeakSet<Turn<Item>>();
  /** Set while `addAll` queues its pieces: none starts before all of them wait in their lines. */
  private holding = false;
  private idle: (() => void)[] = [];

  constructor(private readonly options: TurnsOptions<Item>) {}

  get waitingCount(): number {
    return this.queued;
  }

  get runningCount(): number {
    return this.running;
  }

  /** How many pieces of this program wait for their turn. */
  waitingOf(program: string): number {
    return this.waitingBy.get(program) ?? 0;
  }

  /** How many pieces of each program wait for their turn (programs with none left out). */
  waitingPerProgram(): Map<string, number> {
    return new Map(this.waitingBy);
  }

  /** Whether a piece under this key waits or runs. */
  has(key: string): boolean {
    return this.waitingKeys.has(key) || this.runningKeys.has(key);
  }

  /** Whether a piece under this key has had its turn and is not done yet. */
  isRunning(key: string): boolean {
    return this.runningKeys.has(key);
  }

  /**
   * Queues a piece in its program's line (and lane) and starts what has room. Under a key that
   * already waits, the piece replaces the waiting one in its place.
   */
  add(program: string, item: Item, options: { key?: string; lane?: string } = {}): Place {
    const { key, lane = '' } = options;
    const already = key === undefined ? undefined : this.waitingKeys.get(key);
    if (already) {
      already.item = item;
      return { leave: () => this.leave(already) };
    }
    const turn: Turn<Item> = { program, lane, key, item };
    const lanes = this.waiting.get(program) ?? new Map<string, Turn<Item>[]>();
    const line = lanes.get(lane);
    if (line) line.push(turn);
    else lanes.set(lane, [turn]);
    this.waiting.set(program, lanes);
    this.waitingBy.set(program, this.waitingOf(program) + 1);
    if (key !== undefined) this.waitingKeys.set(key, turn);
    this.queued += 1;
    if (!this.holding) this.pump();
    return { leave: () => this.leave(turn) };
  }

  /**
   * Queues several pieces, then starts what has room: programs take turns over all of them, where
   * adding them one by one would start each as it came (a poll finding one program's work first
   * would fill every free place with it before the next program's was even queued).
   */
  addAll(pieces: readonly { program: string; item: Item; key?: string; lane?: string }[]): Place[] {
    this.holding = true;
    try {
      return pieces.map((piece) => this.add(piece.program, piece.item, piece));
    } finally {
      this.holding = false;
      this.pump();
    }
  }

  /**
   * A running piece gives its lane's place back before it is done: the lane's next piece may start,
   * while this one keeps its place among all the running ones (and its program's, and its key) until
   * `done`. The webhook scheduler's attempt, once its subscriber has answered: the lane bounds the
   * requests a subscriber has open, not the recording of their outcomes. Once per piece.
   */
  leaveLane(turn: Turn<Item>): void {
    // Only a running piece holds a lane's place: after `done` (or before its turn) this changes nothing.
    if (!this.runningTurns.has(turn) || this.leftLane.has(turn)) return;
    this.leftLane.add(turn);
    decrement(this.runningByLane, laneKey(turn));
    this.pump();
  }

  /** The end of a piece that had its turn: the next program's waiting work starts. */
  done(turn: Turn<Item>): void {
    // Once per piece: a second `done` (or one for a piece that never ran) would free places twice.
    if (!this.runningTurns.delete(turn)) return;
    this.running -= 1;
    decrement(this.runningBy, turn.program);
    if (!this.leftLane.delete(turn)) decrement(this.runningByLane, laneKey(turn));
    if (turn.key !== undefined) decrement(this.runningKeys, turn.key);
    const batch = this.batchOf.get(turn);
    if (batch) {
      this.batchOf.delete(turn);
      batch.left -= 1;
      if (batch.left === 0) this.batches -= 1;
    }
    this.pump();
    if (this.running === 0 && this.queued === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Resolves once nothing waits or runs. */
  whenIdle(): Promise<void> {
    if (this.running === 0 && this.queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Forgets every waiting piece (a stop); running ones still end with `done`. */
  clear(): void {
    this.waiting.clear();
    this.waitingBy.clear();
    this.waitingKeys.clear();
    this.queued = 0;
    this.report();
    if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Starts waiting pieces while there is room, a batch at a time; reports the counts after any change. */
  private pump(): void {
    const batch = this.options.batch ?? 1;
    const maxBatches = this.options.maxBatches ?? Number.POSITIVE_INFINITY;
    for (;;) {
      const turns: Turn<Item>[] = [];
      while (turns.length < batch && this.running < this.options.concurrency && this.batches < maxBatches) {
        const next = this.takeNext();
        if (!next) break;
        this.start(next);
        turns.push(next);
      }
      this.report();
      if (turns.length === 0) return;
      const running = { left: turns.length };
      for (const turn of turns) this.batchOf.set(turn, running);
      this.batches += 1;
      this.options.onTurn(turns);
    }
  }

  private start(turn: Turn<Item>): void {
    this.runningTurns.add(turn);
    this.running += 1;
    this.runningBy.set(turn.program, (this.runningBy.get(turn.program) ?? 0) + 1);
    this.runningByLane.set(laneKey(turn), (this.runningByLane.get(laneKey(turn)) ?? 0) + 1);
    if (turn.key !== undefined) this.runningKeys.set(turn.key, (this.runningKeys.get(turn.key) ?? 0) + 1);
  }

  /**
   * The first waiting piece of the program whose turn it is, from its first lane below its bound,
   * skipping programs already running their share; the lane and the program then go to the back of
   * their lines.
   */
  private takeNext(): Turn<Item> | undefined {
    const perProgram = this.options.perProgram ?? Number.POSITIVE_INFINITY;
    const perLane = this.options.perLane ?? Number.POSITIVE_INFINITY;
    for (const [program, lanes] of this.waiting) {
      if ((this.runningBy.get(program) ?? 0) >= perProgram) continue;
      for (const [lane, line] of lanes) {
        if ((this.runningByLane.get(laneKey({ program, lane })) ?? 0) >= perLane) continue;
        const turn = line.shift() as Turn<Item>;
        lanes.delete(lane);
        if (line.length > 0) lanes.set(lane, line);
        this.waiting.delete(program);
        if (lanes.size > 0) this.waiting.set(program, lanes);
        this.forgetWaiting(turn);
        return turn;
      }
    }
    return undefined;
  }

  private leave(turn: Turn<Item>): boolean {
    const lanes = this.waiting.get(turn.program);
    const line = lanes?.get(turn.lane);
    const index = line ? line.indexOf(turn) : -1;
    if (!lanes || !line || index < 0) return false;
    line.splice(index, 1);
    if (line.length === 0) lanes.delete(turn.lane);
    if (lanes.size === 0) this.waiting.delete(turn.program);
    this.forgetWaiting(turn);
    this.report();
    if (this.running === 0 && this.queued === 0) for (const resolve of this.idle.splice(0)) resolve();
    return true;
  }

  private forgetWaiting(turn: Turn<Item>): void {
    this.queued -= 1;
    decrement(this.waitingBy, turn.program);
    if (turn.key !== undefined) this.waitingKeys.delete(turn.key);
  }

  private report(): void {
    this.options.report?.(this.running, this.queued);
  }
}

/**
 * The loop around a turn-taking worker: a look for work (a sweep, a poll of a schedule) run on every
 * tick and whenever something nudges it, never two at once; a nudge while one runs is dropped, as
 * that look will find the same work. `tick` decides what a tick does (by default: look).
 */
export class TickAndNudge {
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly options: {
      everyMs: number;
      look: () => Promise<void>;
      tick?: () => void;
    },
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Ticks every `everyMs` from now, or from when `first` (a first look) has ended. */
  start(first?: Promise<void>): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      if (this.options.tick) this.options.tick();
      else this.nudge();
      this.timer = setTimeout(tick, this.options.everyMs);
      this.timer.unref();
    };
    if (!first) return tick();
    void first.finally(() => {
      if (this.stopped) return;
      this.timer = setTimeout(tick, this.options.everyMs);
      this.timer.unref();
    });
  }

  /** Looks now, unless a look runs already; `look` replaces the usual one for this time (a first, wider sweep). */
  nudge(look: () => Promise<void> = this.options.look): Promise<void> | undefined {
    if (this.looking) return undefined;
    this.looking = look().finally(() => {
      this.looking = undefined;
    });
    return this.looking;
  }

  /** No more ticks; resolves once the look in flight has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.looking) await this.looking;
  }
}

function laneKey(turn: { program: string; lane: string }): string {
  return `${turn.program}\u0000${turn.lane}`;
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
