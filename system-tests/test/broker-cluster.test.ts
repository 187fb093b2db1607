import { eventually, startDisposableRabbitCluster, type DisposableRabbitCluster } from '@affiliate/platform/testing';
import { Subscriber, System, type Api } from '../harness';

/**
 * RabbitMQ as a cluster (issue 26, deliverable 6): the whole system on three RabbitMQ nodes with
 * quorum queues, AMQP_URL listing every node. The node that leads the queues is killed (SIGKILL)
 * during a stream of writes; every write acknowledged is delivered to the subscriber as one event,
 * and deliveries resume within 30 s of the kill.
 */
const RESUME_BOUND_MS = 30_000;
const EXCHANGE = 'affiliate.events'; // the default EVENT_EXCHANGE: queues are named under it
const DISPATCHER_QUEUE = `${EXCHANGE}.webhook-dispatcher.events`;

let system: System<DisposableRabbitCluster>;
let api: Api;
const subscriber = new Subscriber();
/** The writers run until this is false; a failed assertion must not leave them writing forever. */
let writing = false;

beforeAll(async () => {
  system = await System.start({ AMQP_QUEUE_TYPE: 'quorum' }, () => startDisposableRabbitCluster(3));
  ({ api } = await system.createProgram());
  const endpoint = await api.post('/webhook-endpoints', { url: await subscriber.start(), eventTypes: ['coupon.created'] });
  expect(endpoint.status).toBe(200);
}, 300_000);
afterAll(async () => {
  writing = false;
  await subscriber.stop();
  await system?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type Acknowledged = { couponId: string; at: number };

test('the node leading the queues killed during writes: nothing acknowledged is lost, and delivery resumes within 30 s', async () => {
  const cluster = system.rabbit;
  // Every queue of the system is a quorum queue replicated on the three nodes.
  const queues = await cluster.queues(`${EXCHANGE}.`);
  expect(queues.map((queue) => queue.name)).toContain(DISPATCHER_QUEUE);
  for (const queue of queues)
    expect({ name: queue.name, type: queue.type, members: queue.members?.length }).toEqual({
      name: queue.name,
      type: 'quorum',
      members: 3,
    });

  // A stream of writes, each producing one coupon.created webhook, from two clients.
  const acknowledged: Acknowledged[] = [];
  let refused = 0;
  writing = true;
  const client = async (index: number) => {
    for (let n = 0; writing; n += 1) {
      const response = await api.post('/coupons', { name: `cluster ${index}-${n}`, percentOff: 10 }).catch(() => undefined);
      if (response && response.status >= 200 && response.status < 300) acknowledged.push({ couponId: response.body.id, at: Date.now() });
      else refused += 1;
      await sleep(200);
    }
  };
  const startedAt = Date.now();
  const clients = Promise.all([0, 1].map((index) => client(index)));
  const deliveredIds = () => new Set(subscriber.events('coupon.created').map((delivery) => delivery.body.data.id as string));
  // Traffic flows through the broker before the kill.
  await eventually(() => expect(deliveredIds().size).toBeGreaterThanOrEqual(5), 60_000, 200);
  const flowingAfterMs = Date.now() - startedAt;

  // Leaders move only when a node fails, so the listing taken before the traffic still names them
  // (each rabbitmqctl call starts an Erlang VM: seconds on a loaded machine, kept out of the traffic).
  const leader = queues.find((queue) => queue.name === DISPATCHER_QUEUE)?.leader;
  expect(cluster.nodes.map((node) => node.name)).toContain(leader);
  const ledByKilled = queues.filter((queue) => queue.leader === leader).length;
  const killedAt = Date.now();
  await cluster.kill(leader as string);

  // Deliveries resume: an event written after the kill reaches the subscriber, within the bound.
  const acknowledgedAfterKill = () => new Set(acknowledged.filter((write) => write.at > killedAt).map((write) => write.couponId));
  const firstResumed = () => {
    const after = acknowledgedAfterKill();
    const times = subscriber
      .events('coupon.created')
      .filter((delivery) => after.has(delivery.body.data.id))
      .map((delivery) => delivery.receivedAt);
    return times.length > 0 ? Math.min(...times) : undefined;
  };
  await eventually(() => expect(firstResumed()).toBeDefined(), Math.max(0, killedAt + RESUME_BOUND_MS - Date.now()), 100);
  const resumedAfterMs = (firstResumed() as number) - killedAt;
  expect(resumedAfterMs).toBeLessThanOrEqual(RESUME_BOUND_MS);

  // Writes go on for a while on the two nodes left, then stop.
  await sleep(5000);
  writing = false;
  await clients;
  expect(acknowledgedAfterKill().size).toBeGreaterThan(0);

  // Every acknowledged write is delivered, as one event: copies (at-least-once) carry one webhook-id.
  const stoppedAt = Date.now();
  await eventually(
    () => expect(acknowledged.filter((write) => !deliveredIds().has(write.couponId)).map((write) => write.couponId)).toEqual([]),
    120_000,
    500,
  );
  const allDeliveredAfterMs = Date.now() - stoppedAt;
  const webhookIdsPerCoupon = new Map<string, Set<string>>();
  for (const delivery of subscriber.events('coupon.created')) {
    const ids = webhookIdsPerCoupon.get(delivery.body.data.id) ?? new Set<string>();
    ids.add(String(delivery.headers['webhook-id']));
    webhookIdsPerCoupon.set(delivery.body.data.id, ids);
  }
  expect([...webhookIdsPerCoupon].filter(([, ids]) => ids.size !== 1)).toEqual([]);
  const acknowledgedIds = new Set(acknowledged.map((write) => write.couponId));
  expect([...webhookIdsPerCoupon.keys()].filter((couponId) => !acknowledgedIds.has(couponId))).toEqual([]);

  // The two nodes left carry the queues: each has a leader among them.
  const survivors = cluster.nodes.map((node) => node.name).filter((name) => name !== leader);
  for (const queue of await cluster.queues(`${EXCHANGE}.`))
    expect({ name: queue.name, leader: survivors.includes(queue.leader as string) }).toEqual({ name: queue.name, leader: true });

  const copies = subscriber.events('coupon.created').length - webhookIdsPerCoupon.size;
  console.log(
    `broker-cluster drill: killed ${leader} (leader of ${ledByKilled} of ${queues.length} queues); ` +
      `${acknowledged.length} writes acknowledged (${acknowledgedAfterKill().size} after the kill, ${refused} refused), 0 lost, ` +
      `${copies} repeated deliveries (same webhook-id); first delivery of a post-kill write ${resumedAfterMs} ms after the kill ` +
      `(first deliveries ${flowingAfterMs} ms after writes began; the last delivered ${allDeliveredAfterMs} ms after writes stopped)`,
  );
}, 300_000);
