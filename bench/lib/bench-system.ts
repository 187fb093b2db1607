import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { MAX_WEBHOOK_ENDPOINTS_CEILING } from '@affiliate/contracts';
import { freePort } from '@affiliate/platform/testing';
import { System, type Component } from '../../system-tests/harness';
import { JsonClient } from './paced-load';
import { systemProcesses, type NamedProcess } from './process-memory';

export const ROOT = join(__dirname, '..', '..');
/** The credential the harness gives every component; the direct and nginx paths present it too. */
export const INTERNAL_TOKEN = 'system-test-internal-token-0123456789';

/** scripts/local-infra.sh start (idempotent): builds mongo-local, starts RabbitMQ and Redis, prints their URLs. */
export function ensureLocalInfra(): Record<string, string> {
  const output = execFileSync('bash', [join(ROOT, 'scripts/local-infra.sh'), 'start'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 600_000,
  });
  return Object.fromEntries(
    output
      .trim()
      .split('\n')
      .map((line) => line.split('='))
      .filter((parts) => parts.length >= 2)
      .map(([key, ...value]) => [key as string, value.join('=')]),
  );
}

export type BenchProgram = { programId: string; key: string; api: JsonClient };

/**
 * The system as the system tests run it (system-tests/harness.ts: every component a compiled Node
 * process, a MongoDB-compatible server and a RabbitMQ node of its own), with the gateway's rate-limit
 * counters in the local Redis as in production, plus what a benchmark needs on top: process ids for
 * memory, and optionally a second gateway build to compare with the current one.
 */
export class BenchSystem {
  private candidate: { child: ChildProcess; url: string } | undefined;
  private readonly clients: JsonClient[] = [];

  private constructor(readonly system: System) {}

  static async start(extraEnv: Record<string, string>): Promise<BenchSystem> {
    // The fan-out scenario subscribes 50 endpoints to one event type: the per-event cap goes to its ceiling, as the endpoint cap does.
    return new BenchSystem(await System.start({ WEBHOOK_MAX_DELIVERIES_PER_EVENT: String(MAX_WEBHOOK_ENDPOINTS_CEILING), ...extraEnv }));
  }

  get gatewayUrl(): string {
    return this.system.gatewayUrl;
  }

  port(component: Component): number {
    return this.system.ports[component];
  }

  /**
   * A program whose rate limit is out of the way (the benchmark measures the system, not the limit),
   * allowed the most webhook endpoints an operator can grant (the fan-out scenario subscribes 50).
   */
  async createProgram(): Promise<BenchProgram> {
    const { programId, key } = await this.system.createProgram({
      rateLimit: { points: 1_000_000, duration: 1 },
      maxWebhookEndpoints: MAX_WEBHOOK_ENDPOINTS_CEILING,
    });
    const api = new JsonClient(`${this.gatewayUrl}/api/v1`, { authorization: `Bearer ${key}` });
    this.clients.push(api);
    return { programId, key, api };
  }

  /** Another gateway build (its dist/start.js) beside the current one, same settings and database. */
  async startCandidateGateway(startScript: string): Promise<string> {
    const port = await freePort();
    // The harness keeps each component's environment to itself; the candidate must get exactly the same.
    // ...but its own metrics port: the current gateway's is taken, and the candidate exited on it.
    const env = {
      ...(this.system as unknown as { env(component: Component): NodeJS.ProcessEnv }).env('gateway'),
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
    };
    const child = spawn(process.execPath, [startScript], { env, stdio: 'ignore' });
    const url = `http://127.0.0.1:${port}`;
    this.candidate = { child, url };
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) })
        .then((response) => response.ok)
        .catch(() => false);
      if (ready) return url;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`candidate gateway ${startScript} did not become ready`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  processes(extra: Map<number, string> = new Map()): NamedProcess[] {
    if (this.candidate?.child.pid) extra.set(this.candidate.child.pid, 'gateway (candidate)');
    return systemProcesses(extra);
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.close();
    if (this.candidate && this.candidate.child.exitCode === null) {
      const exited = new Promise((resolve) => this.candidate?.child.once('exit', resolve));
      this.candidate.child.kill('SIGTERM');
      await exited;
    }
    await this.system.stop();
  }
}
