import { randomUUID } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoadResult } from './http-load';
import { round, summarize } from './stats';

/** Sends of one set-up call answered 503 with Retry-After before the bench gives up on it. */
const MAX_RESENDS = 60;

export type Answer = { status: number; headers: IncomingHttpHeaders; body: string; sentAt: number; answeredAt: number };

/** A keep-alive JSON client for the paced loop and the set-up calls of the scenarios. */
export class JsonClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 512 });

  constructor(
    private readonly baseUrl: string,
    private readonly headers: Record<string, string>,
  ) {}

  send(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Answer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const sentAt = performance.now();
    return new Promise<Answer>((resolve, reject) => {
      const outgoing = request(
        `${this.baseUrl}${path}`,
        {
          method,
          agent: this.agent,
          timeout: 30_000,
          headers: {
            ...this.headers,
            ...extraHeaders,
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks).toString('utf8'),
              sentAt,
              answeredAt: performance.now(),
            }),
          );
          response.on('error', reject);
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error('timed out')));
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  }

  /**
   * The parsed body of a 2xx answer; anything else throws with the answer in the message. A 503 with
   * Retry-After (a service that shed the request before running it, or the gateway finding a service
   * unavailable) is sent again after it, as a client does, up to `MAX_RESENDS` times; a POST carries
   * one Idempotency-Key over all its sends, so a resend never makes a second object.
   */
  async expectOk<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = method === 'POST' ? { 'idempotency-key': randomUUID() } : {};
    let answer = await this.send(method, path, body, headers);
    for (let resends = 0; answer.status === 503 && answer.headers['retry-after'] && resends < MAX_RESENDS; resends++) {
      await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000));
      answer = await this.send(method, path, body, headers);
    }
    if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
    return JSON.parse(answer.body) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}

export type PacedResult = { offered: number; sent: number; answered: number; ok: number; failed: number; skipped: number; seconds: number };

/**
 * Open-loop load at a fixed rate: requests leave on schedule whether or not earlier ones were
 * answered (a closed loop would slow down with the system and hide the backlog). At most
 * `maxInFlight` are outstanding; a request that would exceed it is skipped and counted.
 */
export async function pacedLoop(options: {
  rate: number;
  seconds: number;
  maxInFlight: number;
  fire: (sequence: number) => Promise<boolean>;
}): Promise<PacedResult> {
  const { rate, seconds, maxInFlight, fire } = options;
  const started = performance.now();
  const total = Math.round(rate * seconds);
  let due = 0;
  let inFlight = 0;
  const result: PacedResult = { offered: total, sent: 0, answered: 0, ok: 0, failed: 0, skipped: 0, seconds };
  const pending = new Set<Promise<void>>();
  while (due < total) {
    const target = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    for (; due < target; due++) {
      if (inFlight >= maxInFlight) {
        result.skipped++;
        continue;
      }
      inFlight++;
      result.sent++;
      const sequence = due;
      const settled: Promise<void> = fire(sequence)
        .then(
          (ok) => {
            if (ok) result.ok++;
            else result.failed++;
          },
          () => {
            result.failed++;
          },
        )
        .finally(() => {
          inFlight--;
          result.answered++;
          pending.delete(settled);
        });
      pending.add(settled);
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.all(pending);
  return result;
}

export type ClosedLoopResult = { seconds: number; latencies: number[]; statusCodes: Record<string, number>; errors: number };

/**
 * `connections` clients each sending the next request when the previous one is answered, until the
 * time is up; requests in flight at the end are waited for and counted, so that every request the
 * server handled is accounted for (autocannon drops those, which a counter check cannot allow).
 */
export async function closedLoop(options: {
  connections: number;
  seconds: number;
  send: () => Promise<Answer>;
}): Promise<ClosedLoopResult> {
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const result: ClosedLoopResult = { seconds: 0, latencies: [], statusCodes: {}, errors: 0 };
  const client = async () => {
    while (performance.now() < deadline) {
      try {
        const answer = await options.send();
        result.latencies.push(answer.answeredAt - answer.sentAt);
        result.statusCodes[answer.status] = (result.statusCodes[answer.status] ?? 0) + 1;
      } catch {
        result.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, client));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/** A closed loop's outcome in the shape of an autocannon run; 2xx answers count as successes. */
export function asLoadResult(loop: ClosedLoopResult): LoadResult {
  const latency = summarize(loop.latencies);
  const ok = Object.entries(loop.statusCodes).reduce((sum, [code, count]) => sum + (code.startsWith('2') ? count : 0), 0);
  return {
    seconds: round(loop.seconds, 2),
    requests: loop.latencies.length,
    requestsPerSecond: round(loop.latencies.length / loop.seconds, 1),
    latencyMs: { p50: round(latency.p50, 3), p99: round(latency.p99, 3), max: round(latency.max, 3) },
    errors: loop.errors,
    non2xx: loop.latencies.length - ok,
    statusCodes: loop.statusCodes,
  };
}
