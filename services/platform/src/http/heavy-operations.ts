import type { RequestHandler } from 'express';
import { AppError } from '../errors';
import { programIdOf } from './internal-auth';

/** A heavy operation of a program takes seconds; by then a place is likely free again. */
export const RETRY_AFTER_HEAVY_SECONDS = 5;

/** Heavy operations of one program at once, per process, unless HEAVY_OPERATIONS_PER_PROGRAM says otherwise. */
export const DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM = 2;

/**
 * At most `perProgram` heavy operations (reports, payout runs, exports: reads over a whole period or
 * a whole program) of one program run at once in this process; one more is answered 429 with
 * `Retry-After`. Each is bounded in memory on its own (cursors, batches); this bounds how many one
 * program can stack, so that a few dozen at once cannot take the process down for every program.
 * Counted per process: with R replicas a program runs at most R × perProgram.
 */
export class HeavyOperations {
  private readonly running = new Map<string, number>();

  constructor(readonly perProgram: number = DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM) {}

  /** A place for one heavy operation of the program: call the answer when it ends. A 429 when the program has none left. */
  enter(programId: string): () => void {
    const now = this.running.get(programId) ?? 0;
    if (now >= this.perProgram) {
      throw new AppError(
        429,
        `Too many heavy operations (reports, payout runs, exports) of this program at once: at most ${this.perProgram}; retry when one has finished`,
        { code: 'heavy_operations_limited', retryAfterSeconds: RETRY_AFTER_HEAVY_SECONDS },
      );
    }
    this.running.set(programId, now + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const remaining = (this.running.get(programId) ?? 1) - 1;
      if (remaining > 0) this.running.set(programId, remaining);
      else this.running.delete(programId);
    };
  }

  /** Runs `work` in one of the program's places. */
  async run<T>(programId: string, work: () => Promise<T>): Promise<T> {
    const leave = this.enter(programId);
    try {
      return await work();
    } finally {
      leave();
    }
  }

  /** The route is a heavy operation: its place is held until the answer is sent (or the client goes). */
  middleware(): RequestHandler {
    return (_request, response, next) => {
      const leave = this.enter(programIdOf(response));
      response.once('close', leave);
      next();
    };
  }
}
