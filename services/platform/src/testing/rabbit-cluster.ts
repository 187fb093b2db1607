import { readFileSync, rmSync } from 'node:fs';
import {
  ensureRabbitInstalled,
  rabbitmqctl,
  rabbitNodeSpec,
  startRabbitNode,
  stopRabbitNode,
  waitForPort,
  type DisposableRabbit,
  type RabbitNodeSpec,
} from './rabbit-node';

export type RabbitClusterNode = { name: string; port: number; url: string };
export type ClusterQueue = { name: string; type: string; leader?: string; members?: string[] };

export type DisposableRabbitCluster = DisposableRabbit & {
  nodes: RabbitClusterNode[];
  /** The queues whose names start with `prefix`: type, and for quorum queues the leader and members. */
  queues: (prefix: string) => Promise<ClusterQueue[]>;
  /** SIGKILL of the node's Erlang VM: a crash, with no chance to hand anything over. */
  kill: (node: string) => Promise<void>;
  /** The nodes the cluster sees running, as seen from a node still alive. */
  runningNodes: () => Promise<string[]>;
};

/**
 * A RabbitMQ cluster of a test's own on this machine: `size` nodes of Debian's rabbitmq-server, each
 * with its own node name, AMQP and distribution ports and database directory, the same Erlang cookie
 * (the user's) and the machine's epmd. They start side by side, then every node but the first joins
 * the first (`rabbitmqctl join_cluster`), as an operator forms a cluster by hand.
 * `url` lists every node, comma-separated, as AMQP_URL takes them.
 */
export async function startDisposableRabbitCluster(size = 3): Promise<DisposableRabbitCluster> {
  ensureRabbitInstalled();
  const specs: RabbitNodeSpec[] = [];
  const taken = new Set<number>();
  for (let index = 0; index < size; index += 1) {
    const spec = await rabbitNodeSpec('rabbit-cluster', taken);
    taken.add(spec.port).add(Number(spec.env.RABBITMQ_DIST_PORT));
    specs.push(spec);
  }
  const [seed] = specs as [RabbitNodeSpec, ...RabbitNodeSpec[]];
  const killed = new Set<string>();
  const specOf = (node: string) => {
    const spec = specs.find((candidate) => candidate.node === node);
    if (!spec) throw new Error(`${node} is not a node of this cluster (${specs.map((candidate) => candidate.node).join(', ')})`);
    return spec;
  };
  const alive = () => specs.filter((spec) => !killed.has(spec.node));
  /** rabbitmqctl against the first node still alive: any member answers for the whole cluster. */
  const ask = (args: string[]) => {
    const [first] = alive();
    if (!first) throw new Error('no node of the cluster is running');
    return rabbitmqctl(first, args);
  };

  const runningNodes = async () => {
    const status = JSON.parse(await ask(['cluster_status', '--formatter', 'json'])) as { running_nodes: string[] };
    return status.running_nodes;
  };

  const start = async () => {
    // Side by side: a node restarted after the whole cluster stopped waits for its peers to come back.
    await Promise.all(specs.map((spec) => startRabbitNode(spec)));
    killed.clear();
  };
  const stop = async () => {
    await Promise.all(alive().map((spec) => stopRabbitNode(spec)));
  };

  try {
    await start();
    for (const spec of specs.slice(1)) {
      await rabbitmqctl(spec, ['stop_app']);
      await rabbitmqctl(spec, ['join_cluster', seed.node]);
      await rabbitmqctl(spec, ['start_app']);
      await waitForPort(spec.port, true, 60_000);
    }
    const running = await runningNodes();
    if (running.length !== size)
      throw new Error(`the cluster formed with ${running.length} of ${size} nodes running: ${running.join(', ')}`);
  } catch (error) {
    await Promise.all(specs.map((spec) => stopRabbitNode(spec).catch(() => undefined)));
    throw error;
  }

  return {
    url: specs.map((spec) => `amqp://guest:guest@127.0.0.1:${spec.port}`).join(','),
    nodes: specs.map((spec) => ({ name: spec.node, port: spec.port, url: `amqp://guest:guest@127.0.0.1:${spec.port}` })),
    start,
    stop,
    runningNodes,
    async queues(prefix) {
      const queues = JSON.parse(await ask(['list_queues', '--formatter', 'json', 'name', 'type', 'leader', 'members'])) as ClusterQueue[];
      return queues.filter((queue) => queue.name.startsWith(prefix));
    },
    async kill(node) {
      const spec = specOf(node);
      const pid = Number(readFileSync(spec.env.RABBITMQ_PID_FILE as string, 'utf8').trim());
      if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no process id in ${spec.env.RABBITMQ_PID_FILE}`);
      process.kill(pid, 'SIGKILL');
      killed.add(node);
      await waitForPort(spec.port, false, 30_000);
    },
    async destroy() {
      await stop();
      for (const spec of specs) rmSync(spec.base, { recursive: true, force: true });
    },
  };
}
