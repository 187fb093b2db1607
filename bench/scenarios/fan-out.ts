import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DatabaseOperations, type OperationsPerEvent } from '../lib/db-operations';
import { round, sleep } from '../lib/stats';
import { describeOperations } from './event-latency';
import { withPeakMemory, type ScenarioContext } from './context';

export type FanOut = {
  event: string;
  endpoints: number;
  events: number;
  expectedDeliveries: number;
  delivered: number;
  /** Deliveries over the time from the first POST to the last delivery. */
  deliveriesPerSecond: number;
  seconds: number;
  badSignatures: number;
  /** Database operations per event (each of `endpoints` deliveries), all components. */
  operationsPerEvent?: OperationsPerEvent;
};

/**
 * One event type subscribed by many endpoints of one program: every affiliate.created becomes one
 * signed delivery per endpoint. The events are created quickly, so the dispatcher is the bottleneck.
 */
export async function fanOut(context: ScenarioContext) {
  const { bench, receiver, plan } = context;
  const program = await bench.createProgram();
  const tag = randomUUID().slice(0, 8);
  const paths: string[] = [];
  for (let index = 0; index < plan.fanOut.endpoints; index++) {
    const path = `/fan-out-${tag}/${index}`;
    await receiver.subscribe(program.api, path);
    paths.push(path);
  }
  const mine = new Set(paths);
  let delivered = 0;
  let lastAt = 0;
  const stopListening = receiver.onArrival((arrival) => {
    if (!mine.has(arrival.endpoint)) return;
    delivered++;
    lastAt = arrival.at;
  });
  let created = 0;
  const createAffiliates = async (count: number) => {
    let started = 0;
    const workers = Array.from({ length: Math.min(8, count) }, async () => {
      while (started < count) {
        started++;
        const n = created++;
        await program.api.expectOk('POST', '/affiliates', { firstName: 'Fan', lastName: `Out ${n}`, email: `fan-${tag}-${n}@example.com` });
      }
    });
    await Promise.all(workers);
  };
  const waitFor = async (expected: number) => {
    const deadline = performance.now() + plan.fanOut.timeoutSeconds * 1000;
    while (delivered < expected && performance.now() < deadline) await sleep(50);
  };

  return withPeakMemory(context, async () => {
    // Warm-up: one event to every endpoint (connections, JIT).
    await createAffiliates(1);
    await waitFor(plan.fanOut.endpoints);
    delivered = 0;
    const badBefore = receiver.badSignatures;
    const expected = plan.fanOut.events * plan.fanOut.endpoints;
    context.log(`  ${plan.fanOut.events} events x ${plan.fanOut.endpoints} endpoints = ${expected} deliveries`);
    const operationsBefore = await context.operations?.snapshot();
    const started = performance.now();
    await createAffiliates(plan.fanOut.events);
    await waitFor(expected);
    stopListening();
    const operationsAfter = await context.operations?.snapshot();
    const seconds = ((delivered >= expected ? lastAt : performance.now()) - started) / 1000;
    const result: FanOut = {
      event: 'affiliate.created',
      endpoints: plan.fanOut.endpoints,
      events: plan.fanOut.events,
      expectedDeliveries: expected,
      delivered,
      deliveriesPerSecond: round(delivered / seconds, 1),
      seconds: round(seconds, 2),
      badSignatures: receiver.badSignatures - badBefore,
      ...(operationsBefore && operationsAfter
        ? { operationsPerEvent: DatabaseOperations.perEvent(operationsBefore, operationsAfter, plan.fanOut.events) }
        : {}),
    };
    context.log(`    ${result.delivered}/${expected} delivered in ${result.seconds} s: ${result.deliveriesPerSecond} deliveries/s`);
    if (result.operationsPerEvent) context.log(`    database operations per event: ${describeOperations(result.operationsPerEvent)}`);
    return result;
  });
}
