import autocannon from 'autocannon';
import { round, summarize } from './stats';

/** One closed-loop load run: `connections` clients sending back to back for `seconds`. */
export type LoadSpec = {
  url: string;
  connections: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A fresh body for every request (unique ids); the request is sent as JSON. */
  body?: () => unknown;
};

export type LoadResult = {
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** Connection errors and timeouts: no HTTP answer. */
  errors: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Every latency sample (ms), kept so that rounds can be merged; not written to the results. */
  samples?: number[];
};

/**
 * autocannon drives the load; latencies are taken from its per-response events (sub-millisecond
 * resolution) rather than its histogram, which rounds to whole milliseconds: the gateway's added
 * latency is of that order.
 */
export async function runLoad(spec: LoadSpec, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const headers = { ...spec.headers, ...(spec.body ? { 'content-type': 'application/json' } : {}) };
  const body = spec.body;
  let finish: (error: Error | null, result: autocannon.Result) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = (error, result) => (error ? reject(error) : resolve(result));
  });
  const instance = autocannon(
    {
      url: spec.url,
      connections: spec.connections,
      duration: seconds,
      timeout: 10,
      requests: [
        {
          method: spec.method ?? 'GET',
          headers,
          ...(body ? { setupRequest: (request: autocannon.Request) => ({ ...request, body: JSON.stringify(body()) }) } : {}),
        },
      ],
    },
    (error, result) => finish(error, result),
  );
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
  });
  const result = await done;
  const latency = summarize(latencies);
  const answered = latencies.length;
  const ok = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    seconds: result.duration,
    requests: answered,
    requestsPerSecond: round(answered / result.duration, 1),
    latencyMs: { p50: round(latency.p50, 3), p99: round(latency.p99, 3), max: round(latency.max, 3) },
    errors: result.errors + result.timeouts,
    non2xx: answered - ok,
    statusCodes,
    samples: latencies,
  };
}

/** Several interleaved rounds of one path as one result: requests over time, latencies pooled. */
export function mergeRounds(rounds: LoadResult[]): LoadResult {
  const samples = rounds.flatMap((each) => each.samples ?? []);
  const seconds = rounds.reduce((sum, each) => sum + each.seconds, 0);
  const statusCodes: Record<string, number> = {};
  for (const each of rounds)
    for (const [code, count] of Object.entries(each.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const latency = summarize(samples);
  return {
    seconds: round(seconds, 2),
    requests: samples.length,
    requestsPerSecond: round(samples.length / seconds, 1),
    latencyMs: { p50: round(latency.p50, 3), p99: round(latency.p99, 3), max: round(latency.max, 3) },
    errors: rounds.reduce((sum, each) => sum + each.errors, 0),
    non2xx: rounds.reduce((sum, each) => sum + each.non2xx, 0),
    statusCodes,
  };
}
