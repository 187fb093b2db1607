import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { BenchProgram } from '../lib/bench-system';
import { pacedLoop } from '../lib/paced-load';
import { round, sleep, summarize } from '../lib/stats';
import { withPeakMemory, type ResourceUse, type ScenarioContext } from './context';

export type NoisyNeighbour = {
  burstEvents: number;
  burstSeconds: number;
  burstAcceptedPerSecond: number;
  quietRatePerSecond: number;
  /** The quiet program's events accepted while the burst ran, and their event → webhook latency. */
  quietEvents: number;
  quietLatencyMs: { p50: number; p99: number; max: number };
  quietUndelivered: number;
  /** Seconds after the burst until B's own webhooks were all delivered (the next scenario starts on an idle system). */
  noisyDrainedSeconds: number | null;
};

/**
 * Program B sends a burst of affiliate.created events as fast as 64 connections allow while program
 * A sends 20 events a second; both have a webhook endpoint on the local subscriber. What A's
 * subscriber sees during B's burst (event → signed webhook, p50 / p99) shows whether one program's
 * load degrades another's service.
 */
const NOISY_DRAIN_TIMEOUT_SECONDS = 180;

export async function noisyNeighbour(context: ScenarioContext): Promise<NoisyNeighbour & ResourceUse> {
  const { bench, receiver, plan } = context;
  const [quiet, noisy] = [await bench.createProgram(), await bench.createProgram()];
  await receiver.subscribe(quiet.api, '/quiet');
  await receiver.subscribe(noisy.api, '/noisy');
  const { arrivedAt, stop: stopListening } = receiver.firstArrivals('/quiet');
  const { arrivedAt: noisyArrivedAt, stop: stopListeningToNoisy } = receiver.firstArrivals('/noisy');
  const tag = randomUUID().slice(0, 8);
  const createAffiliate = (program: BenchProgram, who: string, n: number) =>
    program.api.send('POST', '/affiliates', { firstName: who, lastName: `Neighbour ${n}`, email: `${who}-${tag}-${n}@example.com` });

  return withPeakMemory(context, async () => {
    const { burstEvents, quietRatePerSecond, drainTimeoutSeconds } = plan.noisyNeighbour;
    let burstDone = false;
    let burstAccepted = 0;
    let next = 0;
    const burstStarted = performance.now();
    const burst = Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < burstEvents) {
          const answer = await createAffiliate(noisy, 'noisy', next++).catch(() => undefined);
          if (answer?.status === 200) burstAccepted++;
        }
      }),
    ).then(() => {
      burstDone = true;
      return (performance.now() - burstStarted) / 1000;
    });

    // The quiet program's events, for as long as the burst runs.
    const acceptedAt = new Map<string, number>();
    let sequence = 0;
    while (!burstDone) {
      await pacedLoop({
        rate: quietRatePerSecond,
        seconds: 1,
        maxInFlight: 64,
        fire: async () => {
          const answer = await createAffiliate(quiet, 'quiet', sequence++);
          if (answer.status !== 200) return false;
          acceptedAt.set((JSON.parse(answer.body) as { id: string }).id, answer.answeredAt);
          return true;
        },
      });
    }
    const burstSeconds = await burst;
    const deadline = performance.now() + drainTimeoutSeconds * 1000;
    while ([...acceptedAt.keys()].some((id) => !arrivedAt.has(id)) && performance.now() < deadline) await sleep(100);
    stopListening();

    const drainedAt = performance.now();
    // B's backlog is still being delivered now that A no longer waits behind it: let it finish, so
    // that it does not weigh on the scenario that runs next.
    const noisyDeadline = performance.now() + NOISY_DRAIN_TIMEOUT_SECONDS * 1000;
    while (noisyArrivedAt.size < burstAccepted && performance.now() < noisyDeadline) await sleep(200);
    stopListeningToNoisy();
    const noisyDrainedSeconds =
      noisyArrivedAt.size >= burstAccepted ? round((performance.now() - burstStarted) / 1000 - burstSeconds, 1) : null;
    const latencies = [...acceptedAt].map(([id, at]) => (arrivedAt.get(id) ?? drainedAt) - at);
    const latency = summarize(latencies);
    const result: NoisyNeighbour = {
      burstEvents,
      burstSeconds: round(burstSeconds, 1),
      burstAcceptedPerSecond: round(burstAccepted / burstSeconds, 1),
      quietRatePerSecond,
      quietEvents: acceptedAt.size,
      quietLatencyMs: { p50: round(latency.p50, 1), p99: round(latency.p99, 1), max: round(latency.max, 1) },
      quietUndelivered: [...acceptedAt.keys()].filter((id) => !arrivedAt.has(id)).length,
      noisyDrainedSeconds,
    };
    context.log(
      `  burst of ${burstEvents} in ${result.burstSeconds} s (${result.burstAcceptedPerSecond}/s accepted); quiet program: ${result.quietEvents} events, ` +
        `p50 ${result.quietLatencyMs.p50} ms, p99 ${result.quietLatencyMs.p99} ms, ${result.quietUndelivered} undelivered; ` +
        (noisyDrainedSeconds === null
          ? `B's webhooks not all delivered ${NOISY_DRAIN_TIMEOUT_SECONDS} s after the burst`
          : `B's webhooks all delivered ${noisyDrainedSeconds} s after the burst`),
    );
    return result;
  });
}
