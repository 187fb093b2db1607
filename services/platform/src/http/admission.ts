import { context } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { AppError } from '../errors';
import { FairShare } from '../fair-share';
import type { Logger } from '../logger';
import type { ShedReason } from '../metrics';
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
  /**
   * The time from arrival by which a request should be answered, below the gateway's upstream
   * timeout. A request whose turn comes so late that, taking as long as recent requests took, it
   * would finish past it is answered 503 instead of being run: under a slow machine a fixed wait
   * alone let requests be admitted that the gateway then gave up on.
   */
  deadlineMs: number;
  /**
   * Requests of one program a service works on at once; its further requests wait even when there
   * is room, so that one program never holds every running place (DEFAULT_ADMISSION: three quarters, so
   * the other programs always have a quarter of the places).
   */
  maxConcurrentPerProgram?: number;
  /**
   * Requests of one program waiting at once; one more of that program is answered 503 at once,
   * while other programs still queue. So one program's burst cannot fill the queue all share.
   * (DEFAULT_ADMISSION: a quarter.)
   */
  maxQueuedPerProgram?: number;
};

/** Both bounds sit below the gateway's upstream timeout (10 s). */
export const DEFAULT_ADMISSION = {
  maxConcurrent: 64,
  maxQueued: 2000,
  maxWaitMs: 7000,
  deadlineMs: 9000,
  maxConcurrentPerProgram: 48,
  maxQueuedPerProgram: 500,
} satisfies Required<AdmissionSettings>;

/** One program's share of each pool; settings that do not name one leave that pool unshared (the whole of it). */
export function perProgramCaps(settings: AdmissionSettings): { running: number; queued: number } {
  return {
    running: settings.maxConcurrentPerProgram ?? settings.maxConcurrent,
    queued: settings.maxQueuedPerProgram ?? settings.maxQueued,
  };
}

/** A shed request may come back almost at once: the queue moves in milliseconds, not minutes. */
export const RETRY_AFTER_BUSY_SECONDS = 1;

/**
 * Overload is answered, not failed: at most `maxConcurrent` requests run, the next ones wait for a
 * turn, and what cannot be served in time is answered `503` with `Retry-After`. Waiting requests
 * are taken one program at a time in turn (FairShare), so one program's burst queues behind itself
 * and not in front of every other program's requests; each program also has its own running and
 * queued caps, so its burst is refused while the others still get places.
 */
export function admissionControl(
  settings: AdmissionSettings,
  logger: Logger,
  serviceName: string,
  report: (running: number, queued: number) => void = () => undefined,
  onShed: (reason: ShedReason) => void = () => undefined,
): RequestHandler {
  const caps = perProgramCaps(settings);
  const share = new FairShare(settings.maxConcurrent, report, caps.running);
  const serviceTime = new MovingAverage();
  let shedding = false;

  const busy = (reason: string, counted: ShedReason) => {
    onShed(counted);
    if (!shedding) logger.warn({ waiting: share.waitingCount, reason }, 'overloaded: answering 503 with Retry-After');
    shedding = true;
    return new AppError(503, `The ${serviceName} service is busy; retry in a moment`, {
      code: 'service_busy',
      retryAfterSeconds: RETRY_AFTER_BUSY_SECONDS,
    });
  };

  return (request, response, next) => {
    const program = request.header(PROGRAM_ID_HEADER) ?? '';
    if (share.waitingCount >= settings.maxQueued) return next(busy('queue full', 'queue_full'));
    if (share.waitingOf(program) >= caps.queued) {
      // This program's burst only: refused without touching the shedding state every program shares.
      return next(
        new AppError(503, `This program has too many requests waiting at the ${serviceName} service; retry in a moment`, {
          code: 'service_busy',
          retryAfterSeconds: RETRY_AFTER_BUSY_SECONDS,
        }),
      );
    }
    if (share.waitingCount === 0) shedding = false;
    const arrived = Date.now();
    // Set once the request waits; its turn may also come at once, inside enter().
    const wait: { admitted: boolean; timer?: NodeJS.Timeout } = { admitted: false };
    // The turn may come from another request's 'close' listener, which runs in that request's trace
    // (or in none): bound to this request's own, which its spans, calls and events must carry.
    const place = share.enter(
      program,
      context.bind(context.active(), () => {
        wait.admitted = true;
        clearTimeout(wait.timer);
        response.off('close', gone);
        const started = Date.now();
        const late = started > arrived && started - arrived + serviceTime.value > settings.deadlineMs;
        // 'close' follows the last byte of the answer, or a client that went away mid-request.
        response.once('close', () => {
          if (!late) serviceTime.add(Date.now() - started);
          share.done(program);
        });
        next(late ? busy('its turn came too late to finish in time', 'deadline') : undefined);
      }),
    );
    // A client that gives up while waiting gives its place up too.
    function gone() {
      if (place.leave()) clearTimeout(wait.timer);
    }
    if (wait.admitted) return;
    response.once('close', gone);
    wait.timer = setTimeout(() => {
      if (!place.leave()) return;
      response.off('close', gone);
      next(busy('waited too long', 'wait_timeout'));
    }, settings.maxWaitMs);
  };
}

/** An exponentially weighted moving average: recent requests count most, one outlier fades. */
class MovingAverage {
  private average = 0;
  private samples = 0;

  get value(): number {
    return this.average;
  }

  add(sample: number): void {
    this.samples += 1;
    this.average = this.samples === 1 ? sample : this.average + (sample - this.average) * 0.2;
  }
}
