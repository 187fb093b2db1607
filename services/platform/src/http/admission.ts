import type { RequestHandler } from 'express';
import { AppError } from '../errors';
import { FairShare } from '../fair-share';
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

/**
 * Overload is answered, not failed: at most `maxConcurrent` requests run, the next ones wait for a
 * turn, and what cannot be served in time is answered `503` with `Retry-After`. Waiting requests
 * are taken one program at a time in turn (FairShare), so one program's burst queues behind itself
 * and not in front of every other program's requests.
 */
export function admissionControl(
  settings: AdmissionSettings,
  logger: Logger,
  serviceName: string,
  report: (running: number, queued: number) => void = () => undefined,
): RequestHandler {
  const share = new FairShare(settings.maxConcurrent, report);
  let shedding = false;

  const busy = (reason: string) => {
    if (!shedding) logger.warn({ waiting: share.waitingCount, reason }, 'overloaded: answering 503 with Retry-After');
    shedding = true;
    return new AppError(503, `The ${serviceName} service is busy; retry in a moment`, RETRY_AFTER_BUSY_SECONDS);
  };

  return (request, response, next) => {
    if (share.waitingCount >= settings.maxQueued) return next(busy('queue full'));
    if (share.waitingCount === 0) shedding = false;
    // Set once the request waits; its turn may also come at once, inside enter().
    const wait: { admitted: boolean; timer?: NodeJS.Timeout } = { admitted: false };
    const place = share.enter(request.header(PROGRAM_ID_HEADER) ?? '', () => {
      wait.admitted = true;
      clearTimeout(wait.timer);
      response.off('close', gone);
      // 'close' follows the last byte of the answer, or a client that went away mid-request.
      response.once('close', () => share.done());
      next();
    });
    // A client that gives up while waiting gives its place up too.
    function gone() {
      if (place.leave()) clearTimeout(wait.timer);
    }
    if (wait.admitted) return;
    response.once('close', gone);
    wait.timer = setTimeout(() => {
      if (!place.leave()) return;
      response.off('close', gone);
      next(busy('waited too long'));
    }, settings.maxWaitMs);
  };
}
