/** A place in line: `leave` gives it up (false when its turn had already come). */
export type Place = { leave: () => boolean };

/**
 * Work of many programs, taken in turn: at most `concurrency` pieces run at once, and the waiting
 * ones are taken one program at a time, each program in arrival order. So one program's burst
 * queues behind itself, not in front of every other program's work. Used for requests (admission
 * control) and for events (the webhook fan-out).
 */
export class FairShare {
  private readonly waiting = new Map<string, (() => void)[]>();
  private running = 0;
  private queued = 0;

  constructor(
    private readonly concurrency: number,
    /** Told the counts after every change (metrics). */
    private readonly report: (running: number, queued: number) => void = () => undefined,
  ) {}

  get waitingCount(): number {
    return this.queued;
  }

  /** Starts `onTurn` now if there is room and nobody waits, else when its program's turn comes. Call `done` when the work ends. */
  enter(program: string, onTurn: () => void): Place {
    if (this.running < this.concurrency && this.queued === 0) {
      this.start(onTurn);
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

  /** The end of a piece of work that had its turn: the next program's waiting work starts. */
  done(): void {
    this.running -= 1;
    while (this.running < this.concurrency) {
      const next = this.takeNext();
      if (!next) break;
      this.queued -= 1;
      this.start(next);
    }
    this.report(this.running, this.queued);
  }

  /** Runs `work` in its program's turn. */
  run<T>(program: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enter(program, () => {
        work()
          .then(resolve, reject)
          .finally(() => this.done());
      });
    });
  }

  private start(onTurn: () => void): void {
    this.running += 1;
    this.report(this.running, this.queued);
    onTurn();
  }

  /** The first waiter of the program whose turn it is; that program then goes to the back of the line. */
  private takeNext(): (() => void) | undefined {
    for (const [program, queue] of this.waiting) {
      const next = queue.shift();
      this.waiting.delete(program);
      if (queue.length > 0) this.waiting.set(program, queue);
      if (next) return next;
    }
    return undefined;
  }
}
