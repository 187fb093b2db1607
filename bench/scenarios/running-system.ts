import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseEnv } from 'node:util';
import { ROOT } from '../lib/bench-system';
import { JsonClient, pacedLoop } from '../lib/paced-load';
import type { Plan } from '../lib/plan';
import { round, sleep } from '../lib/stats';
import { WebhookReceiver } from '../lib/webhook-receiver';
import { measuredLatencies, type RateStep } from './event-latency';

/** The event scenario's step (its figures as there), run against a system the bench did not start. */
export type RunningSystemStep = { target: string; startedAt: string } & Pick<
  RateStep,
  | 'targetPerSecond'
  | 'seconds'
  | 'acceptedPerSecond'
  | 'deliveredPerSecond'
  | 'failedRequests'
  | 'skippedRequests'
  | 'latencyMs'
  | 'undelivered'
>;

/** The local default of the gateway's ADMIN_TOKEN (gateway/src/config.ts), which `npm start` keeps unless set. */
const LOCAL_ADMIN_TOKEN = 'local-admin-token-change-me';

/** The admin token the running system was started with: the environment, else the `.env` that `npm start` reads, else the local default. */
function adminToken(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const envFile = process.env.ENV_FILE ?? join(ROOT, '.env');
  const fromFile = existsSync(envFile) ? parseEnv(readFileSync(envFile, 'utf8')).ADMIN_TOKEN : undefined;
  return fromFile ?? LOCAL_ADMIN_TOKEN;
}

/**
 * `npm run bench -- --only=events --target=http://localhost:8080`: the event scenario's 100/s step
 * (the rate of issue 29's p99 and max targets) against a system already running, as `npm start`
 * runs it, on this machine: its processes, its settings, its database. A program (rate limit out of
 * the way) and its key are created through the admin API, a webhook endpoint for `affiliate.created`
 * points at the bench's own subscriber on 127.0.0.1 (which `npm start` allows: it sets
 * WEBHOOK_ALLOW_PRIVATE_URLS); the endpoint and the program are deleted at the end. No traces, GC
 * logs, database counts or memory: those need the components started by the bench.
 */
export async function eventsAgainstRunningSystem(
  target: string,
  plan: Plan,
  rate: number,
  log: (line: string) => void,
): Promise<RunningSystemStep> {
  const base = target.replace(/\/+$/, '');
  const admin = new JsonClient(`${base}/admin/v1`, { authorization: `Bearer ${adminToken()}` });
  const receiver = new WebhookReceiver();
  const clients: JsonClient[] = [admin];
  try {
    const tag = randomUUID().slice(0, 8);
    const program = await admin.expectOk<{ id: string }>('POST', '/programs', {
      name: `bench ${tag}`,
      rateLimit: { points: 1_000_000, duration: 1 },
    });
    const { key } = await admin.expectOk<{ key: string }>('POST', `/programs/${program.id}/api-keys`, {});
    const api = new JsonClient(`${base}/api/v1`, { authorization: `Bearer ${key}` });
    clients.push(api);
    await receiver.start();
    const path = '/running-system';
    const endpoint = await api.expectOk<{ id: string; secret: string }>('POST', '/webhook-endpoints', {
      url: receiver.endpointUrl(path),
      eventTypes: ['affiliate.created'],
    });
    receiver.setSecret(path, endpoint.secret);
    log(`program ${program.id} (bench ${tag}) created through ${base}/admin/v1; webhooks to ${receiver.endpointUrl(path)}`);

    const acceptedAt = new Map<string, number>();
    const { arrivedAt, stop } = receiver.firstArrivals(path);
    let sequence = 0;
    const fire = (measured: Set<string> | undefined) => async () => {
      const n = sequence++;
      const answer = await api.send('POST', '/affiliates', {
        firstName: 'Event',
        lastName: `Bench ${n}`,
        email: `running-${tag}-${n}@example.com`,
      });
      if (answer.status !== 200) return false;
      const id = (JSON.parse(answer.body) as { id: string }).id;
      acceptedAt.set(id, answer.answeredAt);
      measured?.add(id);
      return true;
    };
    const { warmupSeconds, seconds, drainTimeoutSeconds } = plan.events;
    log(`${rate}/s: warm-up ${warmupSeconds} s, then ${seconds} s`);
    if (warmupSeconds > 0) await pacedLoop({ rate, seconds: warmupSeconds, maxInFlight: 256, fire: fire(undefined) });
    const measured = new Set<string>();
    const deliveredBefore = arrivedAt.size;
    const started = performance.now();
    const loop = await pacedLoop({ rate, seconds, maxInFlight: 256, fire: fire(measured) });
    const windowSeconds = (performance.now() - started) / 1000;
    const deliveredInWindow = arrivedAt.size - deliveredBefore;
    const drainDeadline = performance.now() + drainTimeoutSeconds * 1000;
    while (acceptedAt.size > arrivedAt.size && performance.now() < drainDeadline) await sleep(100);
    const drainedAt = performance.now();
    stop();
    const { latency, undelivered } = measuredLatencies(measured, acceptedAt, arrivedAt, drainedAt);
    // The endpoint would otherwise go on receiving (and retrying) this program's events after the bench's subscriber is gone;
    // then the program, whose deletion purges what the run created from every service. A busy system may refuse: the
    // figures are kept all the same, and what is left to delete is named.
    try {
      await api.expectOk('DELETE', '/webhook-endpoints', { webhookEndpointId: endpoint.id });
      await admin.expectOk('DELETE', `/programs/${program.id}`);
    } catch (error) {
      log(`cleaning up failed (${(error as Error).message}): delete program ${program.id} with the admin API`);
    }
    const result: RunningSystemStep = {
      target: base,
      startedAt: new Date(Date.now() - (performance.now() - started)).toISOString(),
      targetPerSecond: rate,
      seconds: round(windowSeconds, 1),
      acceptedPerSecond: round(loop.ok / windowSeconds, 1),
      deliveredPerSecond: round(deliveredInWindow / windowSeconds, 1),
      failedRequests: loop.failed,
      skippedRequests: loop.skipped,
      latencyMs: { p50: round(latency.p50, 1), p99: round(latency.p99, 1), max: round(latency.max, 1) },
      undelivered,
    };
    log(
      `accepted ${result.acceptedPerSecond}/s, delivered ${result.deliveredPerSecond}/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms, ${undelivered} undelivered`,
    );
    return result;
  } finally {
    for (const client of clients) client.close();
    await receiver.stop();
  }
}

const fmt = (value: number) => (Number.isNaN(value) ? 'n/a' : value.toFixed(1));

/** The step beside issue 29's targets at 100/s, as markdown; written with its JSON under bench/results/running/ (ignored by git). */
export function writeRunningSystemResults(step: RunningSystemStep): string {
  const lines = [
    `### ${step.startedAt} · events against the running system at ${step.target} (${hostname()})`,
    '',
    '| figure (issue 29 targets, system started by `npm start`) | this run | target | |',
    '|---|---:|---:|---|',
    `| affiliate.created → signed webhook at ${step.targetPerSecond}/s, p99 (p50) | ${fmt(step.latencyMs.p99)} ms (${fmt(step.latencyMs.p50)} ms) | p99 ≤ 250 ms | ${step.latencyMs.p99 <= 250 ? 'met' : 'missed'} |`,
    `| affiliate.created → signed webhook at ${step.targetPerSecond}/s, max | ${fmt(step.latencyMs.max)} ms | max ≤ 1,000 ms | ${step.latencyMs.max <= 1000 ? 'met' : 'missed'} |`,
    `| accepted / delivered per second over ${fmt(step.seconds)} s | ${fmt(step.acceptedPerSecond)} / ${fmt(step.deliveredPerSecond)} | printed | |`,
    `| failed / skipped requests; accepted events undelivered after the drain | ${step.failedRequests} / ${step.skippedRequests}; ${step.undelivered} | printed | |`,
  ];
  const table = `${lines.join('\n')}\n`;
  const out = join(ROOT, 'bench/results/running');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'latest.json'), `${JSON.stringify(step, null, 2)}\n`);
  return table;
}
