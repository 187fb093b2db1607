import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, testInfra } from '@affiliate/platform/testing';
import { ADMIN_TOKEN, COMPONENTS, ROOT, apiClient, componentLinks, type Api, type Component } from './harness';

/**
 * Two of everything (issue 26, deliverable 5): two replicas of every service and two gateways
 * against the same databases, broker and Redis, each pair behind a round robin that stands in for a
 * Kubernetes Service. Every component calls the services' round robins (with
 * REPLICA_DRILL_GATEWAY_URLS=replicas the gateways name both replicas of each service instead:
 * several URLs per upstream; RELIABILITY.md says how that fared); clients call the gateways' round
 * robin. Both gateways start together with the same new BOOTSTRAP_API_KEY, the race that once kept
 * one of them from coming up.
 */
export type { Component };
export const SERVICES = ['coupon', 'affiliate', 'referral', 'sale', 'webhook-dispatcher'] as const;
export const REPLICAS = 2;

/** How often the round robin probes each backend's /readyz, as a kubelet's readiness probe would. */
const PROBE_INTERVAL_MS = 200;
/** Longer than a probe interval and a probe's answer, so the round robin has let go before the drain. */
export const SHUTDOWN_DELAY_MS = 1500;

/** Probes in a row that must time out before a backend is taken out (a probe's failureThreshold). */
const FAILURE_THRESHOLD = 3;

/**
 * A TCP round robin over a pair of backends, like a Service's virtual IP: each new connection goes
 * to the next ready backend, and stays there. A backend that answers its readiness probe 503 (it is
 * stopping) is taken out at once; one whose probes merely time out (a loaded machine) after
 * FAILURE_THRESHOLD in a row, as a kubelet's failureThreshold does; one that refuses a connection
 * (dead) at once, that connection going to the next. With no backend ready, each is tried in turn
 * rather than refusing outright. Established connections are never moved: when a backend dies, its
 * connections break, as they do in Kubernetes.
 */
export class RoundRobin {
  private readonly ready: boolean[];
  private readonly timeouts: number[];
  /** Backends being stopped (SIGTERM): out of the rotation whatever their probes say, until started again. */
  private readonly terminating: boolean[];
  private next = 0;
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly sockets = new Set<Socket>();
  private stopped = false;
  port = 0;

  constructor(readonly ports: number[]) {
    this.ready = ports.map(() => false);
    this.timeouts = ports.map(() => 0);
    this.terminating = ports.map(() => false);
  }

  /**
   * The backend is being stopped: no new connection goes to it from now on. A Kubernetes Service does
   * the same for a terminating pod, without waiting for a readiness probe to fail; the probes here can
   * take seconds to answer on a loaded machine, and a connection routed meanwhile to a process whose
   * shutdown delay is over is accepted and then closed before its request arrives.
   */
  stopping(index: number): void {
    this.terminating[index] = true;
    this.ready[index] = false;
  }

  /** The backend was started again: its probes decide from now on. */
  started(index: number): void {
    this.terminating[index] = false;
  }

  async start(): Promise<void> {
    this.port = await freePort();
    this.server = createServer((client) => this.route(client));
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
    const probe = async () => {
      await Promise.all(
        this.ports.map(async (port, index) => {
          const answer = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })
            .then((response) => (response.ok ? 'ready' : 'not ready'))
            .catch((error: Error) => (error.name === 'TimeoutError' ? 'timeout' : 'not ready'));
          this.timeouts[index] = answer === 'timeout' ? (this.timeouts[index] ?? 0) + 1 : 0;
          if (this.terminating[index]) this.ready[index] = false;
          else if (answer !== 'timeout') this.ready[index] = answer === 'ready';
          else if ((this.timeouts[index] ?? 0) >= FAILURE_THRESHOLD) this.ready[index] = false;
        }),
      );
      if (!this.stopped) this.timer = setTimeout(() => void probe(), PROBE_INTERVAL_MS);
    };
    await probe();
  }

  private route(client: Socket, tried = 0): void {
    client.pause();
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    const inTurn = this.ports.map((_, index) => (this.next + index) % this.ports.length);
    const ready = inTurn.filter((index) => this.ready[index]);
    const index = ready.length > 0 ? ready[0] : (inTurn.find((candidate) => !this.terminating[candidate]) ?? inTurn[0]);
    if (index === undefined || tried >= this.ports.length) {
      client.destroy(); // every backend refused it: so is the connection
      return;
    }
    this.next = index + 1;
    const backend = createConnection({ host: '127.0.0.1', port: this.ports[index] as number });
    this.sockets.add(backend);
    backend.once('close', () => this.sockets.delete(backend));
    let connected = false;
    backend.once('connect', () => {
      connected = true;
      client.pipe(backend);
      backend.pipe(client);
      client.resume();
    });
    backend.on('error', () => {
      if (connected) return client.destroy();
      this.ready[index] = false;
      this.route(client, tried + 1);
    });
    backend.on('close', () => {
      if (connected) client.destroy();
    });
    client.on('error', () => backend.destroy());
    client.on('close', () => backend.destroy());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

type Running = { child: ChildProcess; exited: Promise<number | null> };
export type Replica = { component: Component; index: number };
const nameOf = ({ component, index }: Replica) => `${component}-${index}`;

export class ReplicatedSystem {
  private readonly ports = new Map<string, number>();
  private readonly balancers = new Map<Component, RoundRobin>();
  private readonly processes = new Map<string, Running>();
  readonly logDir = mkdtempSync(join(tmpdir(), 'system-replicas-'));
  private readonly dbPrefix = `replicas_${randomUUID().slice(0, 8)}`;
  private readonly exchange = `replicas.events.${randomUUID().slice(0, 8)}`;
  gatewayUrl = '';
  /** The BOOTSTRAP_API_KEY both gateways were started with: new to the database, so both race to create it. */
  readonly bootstrapKey = `bootstrap-${randomUUID()}`;
  /** REPLICA_DRILL_GATEWAY_URLS=replicas: the gateways name both replicas of each service instead of its round robin. */
  private readonly gatewaysCallReplicas = process.env.REPLICA_DRILL_GATEWAY_URLS === 'replicas';

  private constructor(private readonly extraEnv: Record<string, string>) {}

  static async start(extraEnv: Record<string, string> = {}): Promise<ReplicatedSystem> {
    const system = new ReplicatedSystem(extraEnv);
    const all = system.replicas();
    for (const replica of all) system.ports.set(nameOf(replica), await freePort());
    for (const component of Object.keys(COMPONENTS) as Component[]) {
      system.balancers.set(component, new RoundRobin([0, 1].map((index) => system.ports.get(nameOf({ component, index })) as number)));
    }
    // The balancers' ports are the upstream URLs, so they exist before any process starts.
    try {
      await Promise.all([...system.balancers.values()].map((balancer) => balancer.start()));
      system.gatewayUrl = `http://127.0.0.1:${system.balancers.get('gateway')?.port}`;
      // All at once, as a Deployment scales out: replicas race at start-up (indexes, bootstrap).
      await Promise.all(all.map((replica) => system.launch(replica)));
      await Promise.all(all.map((replica) => system.waitReady(replica)));
    } catch (error) {
      await system.stop();
      throw error;
    }
    return system;
  }

  replicas(component?: Component): Replica[] {
    const components = component ? [component] : (Object.keys(COMPONENTS) as Component[]);
    return components.flatMap((name) => Array.from({ length: REPLICAS }, (_, index) => ({ component: name, index })));
  }

  private env(replica: Replica): NodeJS.ProcessEnv {
    const { mongoUrl, amqpUrl, redisUrl } = testInfra();
    const url = (name: Component) =>
      this.gatewaysCallReplicas && replica.component === 'gateway'
        ? this.replicas(name)
            .map((backend) => this.urlOf(backend))
            .join(',')
        : `http://127.0.0.1:${this.balancers.get(name)?.port}`;
    return {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.SYSTEM_LOG_LEVEL ?? 'warn',
      PORT: String(this.ports.get(nameOf(replica))),
      METRICS_PORT: '0',
      MONGO_URL: mongoUrl,
      MONGO_DB_PREFIX: this.dbPrefix,
      AMQP_URL: amqpUrl,
      EVENT_EXCHANGE: this.exchange,
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      ...componentLinks(url),
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      ...(replica.component === 'gateway' ? { BOOTSTRAP_API_KEY: this.bootstrapKey } : {}),
      ...this.extraEnv,
    };
  }

  /** One replica's own address, past its pair's round robin. */
  urlOf(replica: Replica): string {
    return `http://127.0.0.1:${this.ports.get(nameOf(replica))}`;
  }

  async launch(replica: Replica): Promise<void> {
    this.balancers.get(replica.component)?.started(replica.index);
    const log = createWriteStream(join(this.logDir, `${nameOf(replica)}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [join(ROOT, COMPONENTS[replica.component], 'dist/start.js')], {
      env: this.env(replica),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    this.processes.set(nameOf(replica), { child, exited });
  }

  async waitReady(replica: Replica, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const running = this.processes.get(nameOf(replica));
      const ready = await fetch(`http://127.0.0.1:${this.ports.get(nameOf(replica))}/readyz`, { signal: AbortSignal.timeout(2000) })
        .then((response) => response.ok)
        .catch(() => false);
      if (ready) return;
      if (running && running.child.exitCode !== null)
        throw new Error(`${nameOf(replica)} exited with ${running.child.exitCode} before it was ready; logs in ${this.logDir}`);
      if (Date.now() > deadline) throw new Error(`${nameOf(replica)} not ready after ${timeoutMs} ms; logs in ${this.logDir}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** SIGKILL (a crash) or SIGTERM (a rolling update); resolves with the exit code once the process is gone. */
  async kill(replica: Replica, signal: NodeJS.Signals): Promise<number | null> {
    const running = this.processes.get(nameOf(replica));
    if (!running) return null;
    if (signal === 'SIGTERM') this.balancers.get(replica.component)?.stopping(replica.index);
    running.child.kill(signal);
    const code = await running.exited;
    this.processes.delete(nameOf(replica));
    return code;
  }

  admin(): Api {
    return apiClient(this.gatewayUrl, ADMIN_TOKEN);
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.processes.entries()].map(async ([, running]) => {
        running.child.kill('SIGKILL');
        await running.exited;
      }),
    );
    this.processes.clear();
    await Promise.all([...this.balancers.values()].map((balancer) => balancer.stop()));
  }
}
