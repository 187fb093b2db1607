import type { RequestHandler } from 'express';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { PROGRAM_ID_HEADER } from './internal-auth';

export type AdmissionSettings = {
  /** Requests a service works on at once; more wait for a turn. */
  maxConcurrent: number;
  /** Requests waiting at once, all programs together; one more is answered 503 at once. */
  maxQueued: number;
  /**
   * The longest a request waits for its turn before it is answered 503. Well below the gateway's
   * upstream timeout, so a busy service answers (and the gateway passes the answer on) instead of
   * going silent until the gateway gives up and counts a timeout against the program's circuit.
   */
  maxWaitMs: number;
};

/** The wait stays below the gateway's upstream timeout (10 s) by the time a request takes once admitted. */
export const DEFAULT_ADMISSION: AdmissionSettings = { maxConcurrent: 64, maxQueued: 2000, maxWaitMs: 7000 };

/** A shed request may come back almost at once: the queue moves in milliseconds, not minutes. */
export const RETRY_AFTER_BUSY_SECONDS = 1;

type Waiter = { admit: () => void; timer: NodeJS.Timeout };

/**
 * Overload is answered, not failed: at most `maxConcurrent` requests run, the next ones wait for a
 * turn, and what cannot be served in time is answered `503` with `Retry-After`. Waiting requests
 * are taken one program at a time in turn, so one program's burst queues behind itself and not in
 * front of every other program's requests.
 */
export function admissionControl(
  settings: AdmissionSettings,
  logger: Logger,
  serviceName: string,
  report: (running: number, queued: number) => void = () => undefined,
): RequestHandler {
  const waiting = new Map<string, Waiter[]>();
  let running = 0;
  let queued = 0;
  let shedding = false;

  const busy = () => new AppError(503, `The ${serviceName} service is busy; retry in a moment`, RETRY_AFTER_BUSY_SECONDS);
  const shed = (reason: string) => {
    if (!shedding) logger.warn({ running, queued, reason }, 'overloaded: answering 503 with Retry-After');
    shedding = true;
  };

  /** The first waiter of the program whose turn it is; that program then goes to the back of the line. */
  const takeNext = (): Waiter | undefined => {
    for (const [programId, queue] of waiting) {
      const waiter = queue.shift();
      waiting.delete(programId);
      if (queue.length > 0) waiting.set(programId, queue);
      if (waiter) return waiter;
    }
    return undefined;
  };

  const admitWaiting = () => {
    while (running < settings.maxConcurrent) {
      const waiter = takeNext();
      if (!waiter) return;
      queued -= 1;
      clearTimeout(waiter.timer);
      waiter.admit();
    }
    if (queued === 0) shedding = false;
    report(running, queued);
  };

  return (request, response, next) => {
    const start = () => {
      running += 1;
      // 'close' follows the last byte of the answer, or a client that went away mid-request.
      response.once('close', () => {
        running -= 1;
        admitWaiting();
      });
      report(running, queued);
      next();
    };
    if (running < settings.maxConcurrent && queued === 0) return start();
    if (queued >= settings.maxQueued) {
      shed('queue full');
      return next(busy());
    }

    const programId = request.header(PROGRAM_ID_HEADER) ?? '';
    const queue = waiting.get(programId) ?? [];
    const leave = () => {
      const index = queue.indexOf(waiter);
      if (index < 0) return false;
      queue.splice(index, 1);
      queued -= 1;
      if (queue.length === 0 && waiting.get(programId) === queue) waiting.delete(programId);
      report(running, queued);
      return true;
    };
    const waiter: Waiter = {
      admit: () => {
        response.off('close', gone);
        start();
      },
      timer: setTimeout(() => {
        if (!leave()) return;
        response.off('close', gone);
        shed('waited too long');
        next(busy());
      }, settings.maxWaitMs),
    };
    // A client that gives up while waiting gives its place up too.
    const gone = () => {
      if (leave()) clearTimeout(waiter.timer);
    };
    response.once('close', gone);
    queue.push(waiter);
    waiting.set(programId, queue);
    queued += 1;
    report(running, queued);
  };
}
