import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pacedLoop } from '../lib/paced-load';
import { round, sleep, summarize } from '../lib/stats';
import { withPeakMemory, type ResourceUse, type ScenarioContext } from './context';

export type Overload = {
  offeredPerSecond: number;
  seconds: number;
  /** POST /affiliates answered 200, per second of the window. */
  acceptedPerSecond: number;
  /** Webhooks of this scenario's events that reached the subscriber during the window, per second. */
  deliveredPerSecond: number;
  /** Answered 503 with Retry-After (shed at the door), and their share of what was offered. */
  shed: number;
  shedShare: number;
  /** Any other answer, a 503 without Retry-After included, and requests the loop could not send. */
  failed: number;
  /** What those other answers were, by status and error code ("no answer: <error>" when none came). */
  failedAs: Record<string, number>;
  skipped: number;
  /** The rate the delivery rate is held against, and where it comes from. */
  sustainedPerSecond: number;
  sustainedFrom: string;
  /** deliveredPerSecond ÷ sustainedPerSecond (target ≥ 0.95). */
  deliveredOverSustained: number;
  /** False when the reference step did not deliver 95 % of its own rate: then the ratio above means nothing. */
  referenceHeld: boolean;
  /** From the 200 of an accepted event to its webhook; every one should be out within `drainLimitSeconds` after the window. */
  latencyMs: { p50: number; p99: number; max: number };
  drainLimitSeconds: number;
  /** Accepted events whose webhook had not arrived `drainLimitSeconds` after the window. */
  undelivered: number;
};

/**
 * Past capacity: POST /affiliates offered at a fixed rate (open loop) well above what the pipeline
 * delivers. The services refuse what would only pile up (503 and Retry-After, counted as shed, not as
 * failed, and not retried: an open loop stands for new callers), so the dispatcher keeps delivering
 * at its sustainable rate and every accepted event goes out soon after. The rate it is held against is
 * the highest the event scenario sustained in the same run, or, when that scenario did not run, the
 * delivered rate of a short step at `plan.overload.referencePerSecond` before the overload.
 */
export async function overload(context: ScenarioContext, sustainedInThisRun: number | null | undefined): Promise<Overload & ResourceUse> {
  const { bench, receiver, plan } = context;
  const settings = plan.overload;
  const program = await bench.createProgram();
  const path = '/overload';
  await receiver.subscribe(program.api, path);
  const acceptedAt = new Map<string, number>();
  const { arrivedAt, stop: stopListening } = receiver.firstArrivals(path);
  const tag = randomUUID().slice(0, 8);
  let sequence = 0;
  let shed = 0;
  const otherAnswers = new Map<string, number>();
  const countOther = (kind: string) => otherAnswers.set(kind, (otherAnswers.get(kind) ?? 0) + 1);

  const fire = async () => {
    const n = sequence++;
    const answer = await program.api
      .send('POST', '/affiliates', {
        firstName: 'Over',
        lastName: `Load ${n}`,
        email: `overload-${tag}-${n}@example.com`,
      })
      .catch((error: Error) => {
        countOther(`no answer: ${error.message}`);
        throw error;
      });
    if (answer.status === 503 && /"code":"service_busy"/.test(answer.body) && answer.headers['retry-after']) {
      shed++;
      return false;
    }
    if (answer.status !== 200) {
      countOther(`${answer.status} ${/"code":"([a-z_]+)"/.exec(answer.body)?.[1] ?? 'without a code'}`);
      return false;
    }
    acceptedAt.set((JSON.parse(answer.body) as { id: string }).id, answer.answeredAt);
    return true;
  };

  /** Waits until every accepted event arrived, or `seconds` passed; true when all did. */
  const drained = async (seconds: number) => {
    const deadline = performance.now() + seconds * 1000;
    while (acceptedAt.size > arrivedAt.size && performance.now() < deadline) await sleep(100);
    return acceptedAt.size <= arrivedAt.size;
  };

  return withPeakMemory(context, async () => {
    let sustainedPerSecond = sustainedInThisRun ?? 0;
    let sustainedFrom = `the event scenario's highest sustained rate in this run`;
    let referenceHeld = true;
    if (!sustainedInThisRun) {
      const rate = settings.referencePerSecond;
      context.log(`  reference: ${rate}/s for ${settings.referenceSeconds} s (the event scenario did not run)`);
      const before = arrivedAt.size;
      const started = performance.now();
      await pacedLoop({ rate, seconds: settings.referenceSeconds, maxInFlight: 256, fire });
      const window = (performance.now() - started) / 1000;
      sustainedPerSecond = round((arrivedAt.size - before) / window, 1);
      sustainedFrom = `delivered at ${rate}/s for ${settings.referenceSeconds} s before the overload`;
      referenceHeld = sustainedPerSecond >= 0.95 * rate;
      await drained(settings.drainLimitSeconds);
    }

    const shedBefore = shed;
    const otherBefore = new Map(otherAnswers);
    const acceptedBefore = acceptedAt.size;
    const deliveredBefore = arrivedAt.size;
    const measuredFrom = sequence;
    context.log(`  offered ${settings.offeredPerSecond}/s for ${settings.seconds} s`);
    const started = performance.now();
    const loop = await pacedLoop({ rate: settings.offeredPerSecond, seconds: settings.seconds, maxInFlight: 512, fire });
    const windowSeconds = (performance.now() - started) / 1000;
    const deliveredInWindow = arrivedAt.size - deliveredBefore;
    const endedAt = performance.now();
    await drained(settings.drainLimitSeconds);
    stopListening();

    const latencies: number[] = [];
    let undelivered = 0;
    for (const [id, accepted] of [...acceptedAt].slice(acceptedBefore)) {
      const arrival = arrivedAt.get(id);
      if (arrival === undefined) undelivered++;
      latencies.push((arrival ?? Math.max(endedAt + settings.drainLimitSeconds * 1000, performance.now())) - accepted);
    }
    const latency = summarize(latencies);
    const shedInWindow = shed - shedBefore;
    const offered = sequence - measuredFrom + loop.skipped;
    const deliveredPerSecond = round(deliveredInWindow / windowSeconds, 1);
    const result: Overload = {
      offeredPerSecond: settings.offeredPerSecond,
      seconds: round(windowSeconds, 1),
      acceptedPerSecond: round(loop.ok / windowSeconds, 1),
      deliveredPerSecond,
      shed: shedInWindow,
      shedShare: round(shedInWindow / Math.max(1, offered), 3),
      failed: loop.failed - shedInWindow,
      failedAs: Object.fromEntries(
        [...otherAnswers].map(([kind, count]) => [kind, count - (otherBefore.get(kind) ?? 0)] as const).filter(([, count]) => count > 0),
      ),
      skipped: loop.skipped,
      sustainedPerSecond,
      sustainedFrom,
      deliveredOverSustained: sustainedPerSecond > 0 ? round(deliveredPerSecond / sustainedPerSecond, 3) : 0,
      referenceHeld,
      latencyMs: { p50: round(latency.p50, 1), p99: round(latency.p99, 1), max: round(latency.max, 1) },
      drainLimitSeconds: settings.drainLimitSeconds,
      undelivered,
    };
    context.log(
      `    accepted ${result.acceptedPerSecond}/s, delivered ${deliveredPerSecond}/s (${result.deliveredOverSustained} of ${sustainedPerSecond}/s sustained), ` +
        `shed ${shedInWindow} (${(result.shedShare * 100).toFixed(1)} %), failed ${result.failed}${
          result.failed > 0 ? ` (${failuresOf(result)})` : ''
        }, skipped ${loop.skipped}; ` +
        `accepted → webhook p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms; ${undelivered} undelivered ${settings.drainLimitSeconds} s after`,
    );
    return result;
  });
}

/** The other answers of an overload run, by kind: "3 503 service_unavailable, 1 no answer: timed out". */
export function failuresOf(result: Pick<Overload, 'failedAs'>): string {
  return Object.entries(result.failedAs ?? {})
    .map(([kind, count]) => `${count} ${kind}`)
    .join(', ');
}
