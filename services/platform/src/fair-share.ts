/** A place in line: `leave` gives it up (false when its turn had already come). */
export type Place = { leave: () => boolean };

/**
 * Work of many programs, taken in turn: at most `concurrency` pieces run at once, at most
 * `perProgram` of them for any one program, and the waiting ones are taken one program at a time,
 * each program in arrival order. So one program's burst queues behind itself, not in front of every
 * other program's work, and never takes every running place. Used for requests (admission control)
 * and for events (the webhook fan-out).
 */
export class FairShare {
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly runningBy = new Map<string, number>();
  private running = 0;
  private queued = 0;

  constructor(
    private readonly concurrency: number,
    /** Told the counts after every change (metrics). */
    private readonly report: (running: number, queued: number) => void = () => undefined,
    /** Pieces of one program that may run at once; the rest of its work waits even when there is room. */
    private readonly perProgram = Number.POSITIVE_INFINITY,
  ) {}

  get waitingCount(): number {
    return this.queued;
  }

  /** How many pieces of this program wait for their turn. */
  waitingOf(program: string): number {
    return this.waiting.get(program)?.length ?? 0;
  }

  /**
   * Starts `onTurn` now if there is room for it and nobody of its program waits, else when its
   * program's turn comes. Call `done(program)` when the work ends.
   */
  enter(program: string, onTurn: () => void): Place {
    if (
      this.running < this.concurrency &&
      this.runningOf(program) < this.perProgram &&
      !this.waiting.has(program) &&
      this.nobodyRunnableWaits()
    ) {
      this.start(program, onTurn);
      return { leave: () => false };
    }
    const queue = this.waiting.get(program) ?? [];
    queue.push(onTurn);
    this.waiting.set(program, queue);
    this.queued += 1;
    this.report(this.running, this.queued);
    return {
      leave: () => {
        const index = queue.indexOf(onTurn);
        if (index < 0) return false;
        queue.splice(index, 1);
        this.queued -= 1;
        if (queue.length === 0 && this.waiting.get(program) === queue) this.waiting.delete(program);
        this.report(this.running, this.queued);
        return true;
      },
    };
  }

  /** The end of a piece of work of `program` that had its turn: the next program's waiting work starts. */
  done(program: string): void {
    this.running -= 1;
    const left = this.runningOf(program) - 1;
    if (left > 0) this.runningBy.set(program, left);
    else this.runningBy.delete(program);
    while (this.running < this.concurrency) {
      const next = this.takeNext();
      if (!next) break;
      this.queued -= 1;
      this.start(next.program, next.onTurn);
    }
    this.report(this.running, this.queued);
  }

  /** Runs `work` in its program's turn. */
  run<T>(program: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enter(program, () => {
        work()
          .then(resolve, reject)
          .finally(() => this.done(program));
      });
    });
  }

  private runningOf(program: string): number {
    return this.runningBy.get(program) ?? 0;
  }

  /** Whether some waiting work could start now (its program is under its cap): new work must not jump ahead of it. */
  private nobodyRunnableWaits(): boolean {
    if (this.queued === 0) return true;
    for (const program of this.waiting.keys()) if (this.runningOf(program) < this.perProgram) return false;
    return true;
  }

  private start(program: string, onTurn: () => void): void {
    this.running += 1;
    this.runningBy.set(program, this.runningOf(program) + 1);
    this.report(this.running, this.queued);
    onTurn();
  }

  /**
   * The first waiter of the program whose turn it is, skipping programs already running their
   * share; that program then goes to the back of the line.
   */
  private takeNext(): { program: string; onTurn: () => void } | undefined {
    for (const [program, queue] of this.waiting) {
      if (this.runningOf(program) >= this.perProgram) continue;
      const onTurn = queue.shift();
      this.waiting.delete(program);
      if (queue.length > 0) this.waiting.set(program, queue);
      if (onTurn) return { program, onTurn };
    }
    return undefined;
  }
}
