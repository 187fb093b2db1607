import type { UpstreamProxy } from './upstream-proxy';

/** An upstream is reachable when its own liveness probe answers 200 within a second. */
export async function upstreamReachability(upstreams: UpstreamProxy[]): Promise<Record<string, boolean>> {
  const results = await Promise.all(
    upstreams.map(async (upstream) => {
      try {
        const response = await fetch(new URL('/healthz', upstream.url), { signal: AbortSignal.timeout(1000) });
        await response.body?.cancel();
        return [upstream.name, response.status === 200] as const;
      } catch {
        return [upstream.name, false] as const;
      }
    }),
  );
  return Object.fromEntries(results);
}
