import amqp from 'amqplib';
import { eventually } from '@affiliate/platform/testing';
import { COMPONENTS, System, type Component } from '../harness';

/**
 * Readiness is the process's own: it is serving, its own database answers and, where it consumes
 * events, a consumer is attached to each of its queues (issue 26). Liveness never checks a
 * dependency. The real processes, on a MongoDB and a RabbitMQ node of this file's own, which the
 * tests take away and bring back.
 */
const ALL = Object.keys(COMPONENTS) as Component[];
type Probe = { status: number; checks: Record<string, boolean> };

let system: System;
/** The components whose readiness includes the broker: those that consume events. */
let consumers: Component[];

async function probe(component: Component, path: '/readyz' | '/healthz'): Promise<Probe> {
  const response = await fetch(`http://127.0.0.1:${system.ports[component]}${path}`, { signal: AbortSignal.timeout(5000) });
  const body = (await response.json()) as { checks?: Record<string, boolean> };
  return { status: response.status, checks: body.checks ?? {} };
}

beforeAll(async () => {
  system = await System.start();
  consumers = [];
  for (const component of ALL) if ('rabbitmq' in (await probe(component, '/readyz')).checks) consumers.push(component);
}, 180_000);
afterAll(() => system?.stop());

/**
 * Takes a dependency away until every component's probes show it: 503 on /readyz with `check` false
 * for the `affected` components, 200 (without a failing check) for the others, 200 on /healthz for
 * all. Then brings it back, and every component is ready again.
 */
async function duringOutage(
  dependency: { stop: () => Promise<void>; start: () => Promise<void> },
  check: 'mongo' | 'rabbitmq',
  affected: Component[],
): Promise<void> {
  await dependency.stop();
  try {
    await eventually(
      async () => {
        for (const component of ALL) {
          const ready = await probe(component, '/readyz');
          const expected = affected.includes(component)
            ? { status: 503, check: false }
            : { status: 200, check: ready.checks[check] === undefined ? undefined : true };
          expect({ component, status: ready.status, check: ready.checks[check] }).toEqual({ component, ...expected });
          expect({ component, live: (await probe(component, '/healthz')).status }).toEqual({ component, live: 200 });
        }
      },
      90_000,
      500,
    );
  } finally {
    await dependency.start();
  }
  await Promise.all(ALL.map((component) => system.waitReady(component)));
}

test('a component whose own database is unreachable answers 503 on /readyz while /healthz stays 200, and is ready again once it is back', async () => {
  await duringOutage(system.mongo, 'mongo', ALL);
}, 240_000);

test('a consumer the broker no longer delivers to makes its component unready although the connection is up, until it consumes again', async () => {
  expect(consumers).toContain('coupon');
  // The coupon service's queue, taken away and declared again with other arguments: the broker
  // cancels the consumer and refuses the service's own declaration, on a connection that stays up.
  const queue = 'affiliate.events.coupon.affiliates';
  const connection = await amqp.connect(system.rabbit.url);
  try {
    const channel = await connection.createChannel();
    await channel.deleteQueue(queue);
    await channel.assertQueue(queue, { durable: true, arguments: { 'x-max-length': 1_000_000 } });
    const detached = { status: 503, checks: { accepting: true, mongo: true, rabbitmq: false } };
    await eventually(async () => expect(await probe('coupon', '/readyz')).toEqual(detached), 30_000, 200);
    // And it stays so, whatever the connection does meanwhile: every probe, not one that happened
    // to fall between a disconnect and a reconnect.
    for (let probeCount = 0; probeCount < 10; probeCount += 1) {
      expect(await probe('coupon', '/readyz')).toEqual(detached);
      expect((await probe('coupon', '/healthz')).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    // The consumers of the other components are attached: their readiness is their own.
    for (const component of consumers.filter((name) => name !== 'coupon')) expect((await probe(component, '/readyz')).status).toBe(200);
    await channel.deleteQueue(queue);
  } finally {
    await connection.close();
  }
  await system.waitReady('coupon', 60_000);
  expect(await probe('coupon', '/readyz')).toEqual({ status: 200, checks: { accepting: true, mongo: true, rabbitmq: true } });
}, 180_000);

test('while the broker is away the components that consume answer 503 on /readyz, the others stay ready, all stay alive, and all are ready again once it is back', async () => {
  expect(consumers.length).toBeGreaterThan(0);
  await duringOutage(system.rabbit, 'rabbitmq', consumers);
}, 240_000);
