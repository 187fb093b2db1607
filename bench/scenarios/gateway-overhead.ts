import { mergeRounds, runLoad, type LoadResult, type LoadSpec } from '../lib/http-load';
import { INTERNAL_TOKEN } from '../lib/bench-system';
import { startNginx } from '../lib/nginx';
import { asLoadResult, closedLoop, JsonClient } from '../lib/paced-load';
import { round } from '../lib/stats';
import { withPeakMemory, type ScenarioContext } from './context';

/**
 * Latency with nothing queued, from one keep-alive client that honours `Connection: close` as every
 * real client does (autocannon writes the next request onto a connection the server is closing and
 * counts the time it takes to notice, which would exaggerate what a closing hop costs).
 */
async function oneConnection(spec: LoadSpec, seconds: number): Promise<LoadResult> {
  const url = new URL(spec.url);
  const client = new JsonClient(url.origin, spec.headers ?? {});
  try {
    const loop = await closedLoop({ connections: 1, seconds, send: () => client.send('GET', `${url.pathname}${url.search}`) });
    return { ...asLoadResult(loop), samples: loop.latencies };
  } finally {
    client.close();
  }
}

export type PathResult = { loaded: LoadResult; unloaded: LoadResult };

export type GatewayOverhead = {
  request: string;
  connections: number;
  paths: Record<string, PathResult>;
  ratios: {
    throughputGatewayOverDirect: number;
    throughputGatewayOverNginx: number | null;
    throughputCandidateOverGateway: number | null;
  };
  /** Gateway minus the other path, milliseconds: unloaded (one connection) and under load. */
  addedLatencyMs: Record<string, { p50: number; p99: number; loadedP50: number; loadedP99: number }>;
  nginxSkipped?: string;
};

export type GatewayTargets = { nginxBinary?: string; nginxSkipped?: string; candidateUrl?: string };

/**
 * GET one coupon by id three ways, one after the other in this run: through the gateway (API key,
 * rate limit, proxy), straight to the coupon service with the internal headers, and through nginx
 * doing only the proxying. Every path is warmed up first; then, in interleaved rounds, each path has
 * a loaded run (autocannon: throughput) and an unloaded run with one connection (the latency each
 * hop adds when nothing queues).
 */
export async function gatewayOverhead(context: ScenarioContext, targets: GatewayTargets) {
  const { bench, plan } = context;
  const program = await bench.createProgram();
  const coupon = await program.api.expectOk<{ id: string }>('POST', '/coupons', { name: 'Bench coupon', percentOff: 15 });
  const query = `/coupons?id=${coupon.id}`;
  const internal = { 'x-internal-token': INTERNAL_TOKEN, 'x-program-id': program.programId };
  const specs: Record<string, LoadSpec> = {
    direct: { url: `http://127.0.0.1:${bench.port('coupon')}${query}`, connections: plan.gateway.connections, headers: internal },
    gateway: {
      url: `${bench.gatewayUrl}/api/v1${query}`,
      connections: plan.gateway.connections,
      headers: { authorization: `Bearer ${program.key}` },
    },
  };
  const nginx = targets.nginxBinary ? await startNginx(targets.nginxBinary, bench.port('coupon'), internal) : undefined;
  if (nginx) specs.nginx = { url: `${nginx.url}/api/v1${query}`, connections: plan.gateway.connections };
  if (targets.candidateUrl) {
    specs['gateway (candidate)'] = {
      url: `${targets.candidateUrl}/api/v1${query}`,
      connections: plan.gateway.connections,
      headers: { authorization: `Bearer ${program.key}` },
    };
  }
  try {
    return await measure(context, specs, coupon.id, targets);
  } finally {
    await nginx?.stop();
  }
}

async function measure(context: ScenarioContext, specs: Record<string, LoadSpec>, couponId: string, targets: GatewayTargets) {
  const { plan } = context;
  // Every path must answer the same coupon before it is timed.
  for (const [name, spec] of Object.entries(specs)) {
    const check = await fetch(spec.url, { headers: spec.headers });
    const body = (await check.json()) as { id?: string };
    if (check.status !== 200 || body.id !== couponId)
      throw new Error(`${name}: GET ${spec.url} answered ${check.status} ${JSON.stringify(body).slice(0, 200)}`);
  }

  return withPeakMemory(context, async () => {
    const { warmupSeconds, seconds, rounds, unloadedSeconds, connections } = plan.gateway;
    const names = Object.keys(specs);
    context.log(
      `  warm-up ${warmupSeconds} s per path, then ${rounds} interleaved round(s) of ${seconds} s at ${connections} connections and ${unloadedSeconds} s at 1, per path`,
    );
    for (const name of names) await runLoad(specs[name] as LoadSpec, warmupSeconds);
    // Interleaved rounds: drift on a shared machine spreads over every path instead of biasing one.
    const loadedRounds = new Map<string, LoadResult[]>(names.map((name) => [name, []]));
    const unloadedRounds = new Map<string, LoadResult[]>(names.map((name) => [name, []]));
    for (let pass = 0; pass < rounds; pass++) {
      for (const name of names) {
        loadedRounds.get(name)?.push(await runLoad(specs[name] as LoadSpec, seconds));
        unloadedRounds.get(name)?.push(await oneConnection(specs[name] as LoadSpec, unloadedSeconds));
      }
    }
    const paths: Record<string, PathResult> = {};
    for (const name of names) {
      const loaded = mergeRounds(loadedRounds.get(name) ?? []);
      const unloaded = mergeRounds(unloadedRounds.get(name) ?? []);
      paths[name] = { loaded, unloaded };
      context.log(
        `    ${name}: ${loaded.requestsPerSecond} req/s, p50 ${loaded.latencyMs.p50} ms, p99 ${loaded.latencyMs.p99} ms; unloaded p50 ${unloaded.latencyMs.p50} ms, p99 ${unloaded.latencyMs.p99} ms`,
      );
    }
    const gateway = paths.gateway as PathResult;
    const ratio = (other: PathResult | undefined, over: PathResult | undefined) =>
      other && over ? round(other.loaded.requestsPerSecond / over.loaded.requestsPerSecond, 3) : null;
    const addedLatencyMs: GatewayOverhead['addedLatencyMs'] = {};
    for (const name of ['direct', 'nginx'] as const) {
      const other = paths[name];
      if (!other) continue;
      addedLatencyMs[`vs ${name}`] = {
        p50: round(gateway.unloaded.latencyMs.p50 - other.unloaded.latencyMs.p50, 3),
        p99: round(gateway.unloaded.latencyMs.p99 - other.unloaded.latencyMs.p99, 3),
        loadedP50: round(gateway.loaded.latencyMs.p50 - other.loaded.latencyMs.p50, 3),
        loadedP99: round(gateway.loaded.latencyMs.p99 - other.loaded.latencyMs.p99, 3),
      };
    }
    const result: GatewayOverhead = {
      request: 'GET /api/v1/coupons?id=<uuid>',
      connections: plan.gateway.connections,
      paths,
      ratios: {
        throughputGatewayOverDirect: ratio(gateway, paths.direct) as number,
        throughputGatewayOverNginx: ratio(gateway, paths.nginx),
        throughputCandidateOverGateway: ratio(paths['gateway (candidate)'], gateway),
      },
      addedLatencyMs,
      ...(targets.nginxSkipped ? { nginxSkipped: targets.nginxSkipped } : {}),
    };
    return result;
  });
}
