import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { COMPONENTS, type Component } from '../../system-tests/harness';
import { jvmPauses, LogTail, nodePauses, summarizePauses, type GcSummary } from '../lib/gc-log';
import { describeBreakdown, tailBreakdown, type TailBreakdown, type TracedEvent } from '../lib/hop-breakdown';
import { DatabaseOperations, type OperationsPerEvent } from '../lib/db-operations';
import { pacedLoop } from '../lib/paced-load';
import { round, sleep, slope, summarize } from '../lib/stats';
import { withPeakMemory, type ScenarioContext } from './context';

export type RateStep = {
  targetPerSecond: number;
  seconds: number;
  /** POST /affiliates answered 200, per second of the window. */
  acceptedPerSecond: number;
  deliveredPerSecond: number;
  failedRequests: number;
  skippedRequests: number;
  /** From the 200 of POST /affiliates to the verified webhook at the subscriber. */
  latencyMs: { p50: number; p99: number; max: number };
  /** Accepted events not delivered within the drain time (their latency counts as at least that). */
  undelivered: number;
  /** Growth of (accepted - delivered) over the second half of the window, events per second. */
  backlogGrowthPerSecond: number;
  backlogAtEnd: number;
  /** Events of earlier steps still undelivered when this one started (they compete for the dispatcher). */
  pendingAtStart: number;
  sustained: boolean;
  /** Where the time of the slowest 1% went, hop by hop (the step at TRACED_RATE only). */
  tail?: TailBreakdown;
  /** Stop-the-world GC pauses during the step: the database server's JVM and each component's V8. */
  gcPauses?: GcSummary[];
};

/** The step whose events are traced: the rate of the p99 and max targets. */
const TRACED_RATE = 100;
/**
 * One request in four carries a sampled traceparent: enough traces for the slowest 1% (a stall
 * slows every event in its window alike), few enough that exporting them costs the components little.
 */
const TRACED_SHARE = 0.25;

export type EventLatency = {
  event: string;
  steps: RateStep[];
  /** The highest rate of the steps run that held for the whole window without the backlog growing. */
  highestSustainedPerSecond: number | null;
  sustainWindowSeconds: number;
  /**
   * Database operations per event, every component: `OPERATIONS_EVENTS` events created 8 at a time
   * and counted until delivered, less what the components do idle over as long.
   */
  operationsPerEvent?: OperationsPerEvent;
};

const OPERATIONS_EVENTS = 200;
const IDLE_WINDOW_MS = 3000;

/**
 * Events end to end: POST /affiliates through the gateway, the affiliate service writes the
 * affiliate and its event in one document, the outbox relay publishes to RabbitMQ, the dispatcher
 * stores a delivery and sends the signed webhook to the local subscriber. Requests leave at a fixed
 * rate (open loop). A step is sustained when at least 95% of the rate was accepted, under 1% of the
 * requests failed, and the backlog did not grow by more than 5% of the rate per second.
 */
export async function eventLatency(context: ScenarioContext) {
  const { bench, receiver, plan } = context;
  const program = await bench.createProgram();
  const path = '/latency';
  await receiver.subscribe(program.api, path);

  const acceptedAt = new Map<string, number>();
  const { arrivedAt, stop: stopListening } = receiver.firstArrivals(path);
  const tag = randomUUID().slice(0, 8);
  let sequence = 0;

  /** One create; with `traced`, every TRACED_SHARE-th measured one carries a sampled traceparent (the hop breakdown). */
  const fire = (measured: Set<string> | undefined, traced?: Map<string, string>) => async () => {
    const n = sequence++;
    const trace = traced && measured && n % Math.round(1 / TRACED_SHARE) === 0 ? context.traces.newTrace() : undefined;
    const answer = await program.api.send(
      'POST',
      '/affiliates',
      { firstName: 'Event', lastName: `Bench ${n}`, email: `event-${tag}-${n}@example.com` },
      trace ? { traceparent: trace.traceparent } : {},
    );
    if (answer.status !== 200) return false;
    const id = (JSON.parse(answer.body) as { id: string }).id;
    acceptedAt.set(id, answer.answeredAt);
    measured?.add(id);
    if (trace) traced?.set(id, trace.traceId);
    return true;
  };
  const step = async (rate: number, seconds: number, warmupSeconds: number): Promise<RateStep> => {
    const traced = new Map<string, string>();
    const tracing = rate === TRACED_RATE;
    const pendingAtStart = acceptedAt.size - arrivedAt.size;
    context.log(
      `  ${rate}/s: warm-up ${warmupSeconds} s, then ${seconds} s${pendingAtStart > 0 ? ` (${pendingAtStart} events of earlier steps still pending)` : ''}`,
    );
    if (warmupSeconds > 0) await pacedLoop({ rate, seconds: warmupSeconds, maxInFlight: 256, fire: fire(undefined) });

    const measured = new Set<string>();
    const databaseGc = LogTail.ofFile(context.databaseGcLog);
    const componentLogs = (Object.keys(COMPONENTS) as Component[]).map((component) => ({
      component,
      log: new LogTail(() => bench.system.logOf(component)),
    }));
    const deliveredBefore = arrivedAt.size;
    const backlog: Array<[number, number]> = [];
    const started = performance.now();
    const sampler = setInterval(() => backlog.push([(performance.now() - started) / 1000, acceptedAt.size - arrivedAt.size]), 1000);
    const loop = await pacedLoop({ rate, seconds, maxInFlight: 256, fire: fire(measured, tracing ? traced : undefined) });
    clearInterval(sampler);
    const windowSeconds = (performance.now() - started) / 1000;
    const deliveredInWindow = arrivedAt.size - deliveredBefore;
    const backlogAtEnd = acceptedAt.size - arrivedAt.size;

    const drainDeadline = performance.now() + plan.events.drainTimeoutSeconds * 1000;
    while (acceptedAt.size > arrivedAt.size && performance.now() < drainDeadline) await sleep(100);
    const drainedAt = performance.now();
    const { latency, undelivered } = measuredLatencies(measured, acceptedAt, arrivedAt, drainedAt);
    const databasePauses = jvmPauses(databaseGc.text());
    const gcPauses = [
      summarizePauses('mongodb (JVM)', databasePauses),
      ...componentLogs.map(({ component, log }) => summarizePauses(component, nodePauses(log.text()))),
    ];
    let tail: TailBreakdown | undefined;
    if (traced.size > 0) {
      // The components export their spans once a second: the last events' spans are still on their way.
      await sleep(3000);
      const events: TracedEvent[] = [];
      for (const [id, traceId] of traced) {
        const arrival = arrivedAt.get(id);
        if (arrival === undefined) continue;
        events.push({
          traceId,
          acceptedMs: performance.timeOrigin + (acceptedAt.get(id) as number),
          answeredMs: performance.timeOrigin + arrival,
        });
      }
      tail = tailBreakdown(events, (traceId) => context.traces.spansOf(traceId), receiver.endpointUrl(path), databasePauses);
      context.traces.clear();
    }
    const growth = slope(backlog.slice(Math.floor(backlog.length / 2)));
    const accepted = loop.ok / windowSeconds;
    const result: RateStep = {
      targetPerSecond: rate,
      seconds: round(windowSeconds, 1),
      acceptedPerSecond: round(accepted, 1),
      deliveredPerSecond: round(deliveredInWindow / windowSeconds, 1),
      failedRequests: loop.failed,
      skippedRequests: loop.skipped,
      latencyMs: { p50: round(latency.p50, 1), p99: round(latency.p99, 1), max: round(latency.max, 1) },
      undelivered,
      backlogGrowthPerSecond: round(growth, 1),
      backlogAtEnd,
      pendingAtStart,
      sustained: accepted >= 0.95 * rate && loop.failed <= 0.01 * loop.offered && growth <= Math.max(2, 0.05 * rate),
      ...(tail ? { tail } : {}),
      gcPauses,
    };
    context.log(
      `    accepted ${result.acceptedPerSecond}/s, delivered ${result.deliveredPerSecond}/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms, ` +
        `backlog +${result.backlogGrowthPerSecond}/s (${backlogAtEnd} at end), ${undelivered} undelivered: ${result.sustained ? 'sustained' : 'not sustained'}`,
    );
    if (tail) for (const line of describeBreakdown(tail)) context.log(`    ${line}`);
    context.log(`    longest GC pauses: ${describePauses(gcPauses)}`);
    return result;
  };

  return withPeakMemory(context, async () => {
    const { seconds, warmupSeconds } = plan.events;
    const operationsPerEvent = await countOperations();
    const steps: RateStep[] = [];
    for (const rate of plan.events.rates) steps.push(await step(rate, seconds, warmupSeconds));
    if (plan.events.search) await search(steps);
    stopListening();
    const held = steps.filter((each) => each.sustained).map((each) => each.targetPerSecond);
    const result: EventLatency = {
      event: 'affiliate.created',
      steps,
      highestSustainedPerSecond: held.length > 0 ? Math.max(...held) : null,
      sustainWindowSeconds: seconds,
      ...(operationsPerEvent ? { operationsPerEvent } : {}),
    };
    return result;
  });

  /**
   * What one event costs in database operations, from the components' own counts: an idle window
   * first (what sweeps, polls and readiness reads cost with no events), then a batch of events created
   * 8 at a time and counted until every one is delivered, the idle cost over as long taken off.
   */
  async function countOperations(): Promise<OperationsPerEvent | undefined> {
    const operations = context.operations;
    if (!operations) return undefined;
    context.log(`  database operations: idle ${IDLE_WINDOW_MS / 1000} s, then ${OPERATIONS_EVENTS} events until delivered`);
    const idleBefore = await operations.snapshot();
    const idleStarted = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const idleAfter = await operations.snapshot();
    const idleSeconds = (performance.now() - idleStarted) / 1000;
    const started = performance.now();
    const created = new Set<string>();
    const create = fire(created);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < OPERATIONS_EVENTS) {
          next += 1;
          await create();
        }
      }),
    );
    const deadline = performance.now() + plan.events.drainTimeoutSeconds * 3000;
    while ([...created].some((id) => !arrivedAt.has(id)) && performance.now() < deadline) await sleep(100);
    const after = await operations.snapshot();
    const seconds = (performance.now() - started) / 1000;
    const figure = DatabaseOperations.perEvent(idleAfter, after, Math.max(1, created.size), {
      before: idleBefore,
      after: idleAfter,
      scale: seconds / idleSeconds,
    });
    const undelivered = [...created].filter((id) => !arrivedAt.has(id)).length;
    context.log(
      `    database operations per event: ${describeOperations(figure)}${undelivered > 0 ? ` (${undelivered} of ${created.size} not delivered in time)` : ''}`,
    );
    return figure;
  }

  /**
   * Narrows the highest sustained rate with the steps the budget allows: above the highest rate
   * that held, guided by the delivery rate measured where it did not hold.
   */
  async function search(steps: RateStep[]): Promise<void> {
    const stepCost = plan.events.seconds + plan.events.warmupSeconds + plan.events.drainTimeoutSeconds / 2;
    for (let attempt = 0; attempt < 3 && context.remainingSeconds() > stepCost + 15; attempt++) {
      const held = steps.filter((each) => each.sustained);
      const failed = steps.filter((each) => !each.sustained);
      const best = held.length > 0 ? Math.max(...held.map((each) => each.targetPerSecond)) : 0;
      const lowestFailure = failed.length > 0 ? Math.min(...failed.map((each) => each.targetPerSecond)) : Number.POSITIVE_INFINITY;
      const roundTen = (value: number) => Math.round(value / 10) * 10;
      let next: number;
      if (lowestFailure === Number.POSITIVE_INFINITY) next = best * 2;
      else if (attempt === 0) {
        // First guess: a little under the capacity seen where it broke, between what held and what broke.
        const capacity = Math.min(...failed.map((each) => Math.min(each.acceptedPerSecond, each.deliveredPerSecond)));
        next = Math.min(lowestFailure - 10, Math.max(best + 10, roundTen(0.9 * capacity)));
      } else next = roundTen((best + lowestFailure) / 2);
      if (next <= best || next >= lowestFailure || lowestFailure - best <= 20) return;
      context.log(`  searching the highest sustained rate: ${next}/s (${Math.round(context.remainingSeconds())} s of budget left)`);
      steps.push(await step(next, plan.events.seconds, plan.events.warmupSeconds));
    }
  }
}

/** Accepted → arrived of each measured event; one not arrived by `drainedAt` counts as at least that, and as undelivered. */
export function measuredLatencies(
  measured: Set<string>,
  acceptedAt: Map<string, number>,
  arrivedAt: Map<string, number>,
  drainedAt: number,
): { latency: ReturnType<typeof summarize>; undelivered: number } {
  const latencies: number[] = [];
  let undelivered = 0;
  for (const id of measured) {
    const arrival = arrivedAt.get(id);
    if (arrival === undefined) undelivered++;
    latencies.push((arrival ?? drainedAt) - (acceptedAt.get(id) as number));
  }
  return { latency: summarize(latencies), undelivered };
}

/** The longest pause of each process that paused, longest first. */
export function describePauses(summaries: GcSummary[]): string {
  const paused = summaries
    .filter((summary) => summary.longest.length > 0)
    .sort((a, b) => (b.longest[0]?.ms ?? 0) - (a.longest[0]?.ms ?? 0));
  if (paused.length === 0) return 'none logged';
  return paused
    .map(
      (summary) =>
        `${summary.process} ${summary.longest[0]?.ms} ms (${summary.longest[0]?.kind}; ${summary.pauses} pauses, ${summary.totalMs} ms in all)`,
    )
    .join(', ');
}

/** "12.3 (9.1 writes): affiliate 4 (3 writes), webhook-dispatcher 8 (6 writes)". */
export function describeOperations(figure: OperationsPerEvent): string {
  const parts = Object.entries(figure.perComponent).map(([component, each]) => `${component} ${each.operations} (${each.writes} writes)`);
  return `${figure.total.operations} (${figure.total.writes} writes): ${parts.join(', ')}`;
}
