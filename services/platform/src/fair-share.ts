import { Turns, type Place, type Turn } from './turns';

/**
 * Callbacks of many programs, run in turn: the platform's turn-taking worker (`Turns`) for work that
 * ends by a call (`done`) rather than by a promise of the worker's own. At most `concurrency` pieces
 * run at once, at most `perProgram` of them for any one program, and the waiting ones are taken one
 * program at a time, each program in arrival order. Used for requests (admission control) and for
 * events (the webhook fan-out).
 */
export class FairShare {
  private readonly turns: Turns<() => void>;
  /** The turns running per program, oldest first, so that `done(program)` hands one of them back. */
  private readonly runningOf = new Map<string, Turn<() => void>[]>();

  constructor(
    concurrency: number,
    /** Told the counts after every change (metrics). */
    report: (running: number, queued: number) => void = () => undefined,
    /** Pieces of one program that may run at once; the rest of its work waits even when there is room. */
    perProgram = Number.POSITIVE_INFINITY,
  ) {
    this.turns = new Turns<() => void>({
      concurrency,
      perProgram,
      report,
      onTurn: (turns) => {
        for (const turn of turns) {
          const running = this.runningOf.get(turn.program) ?? [];
          running.push(turn);
          this.runningOf.set(turn.program, running);
          turn.item();
        }
      },
    });
  }

  get waitingCount(): number {
    return this.turns.waitingCount;
  }

  /** How many pieces of this program wait for their turn. */
  waitingOf(program: string): number {
    return this.turns.waitingOf(program);
  }

  /**
   * Starts `onTurn` now if there is room for it and nobody of its program waits, else when its
   * program's turn comes. Call `done(program)` when the work ends.
   */
  enter(program: string, onTurn: () => void): Place {
    return this.turns.add(program, onTurn);
  }

  /** The end of a piece of work of `program` that had its turn: the next program's waiting work starts. */
  done(program: string): void {
    const running = this.runningOf.get(program);
    const turn = running?.shift();
    if (!turn) return;
    if (running?.length === 0) this.runningOf.delete(program);
    this.turns.done(turn);
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
}
