import {
  createServiceClient,
  type Logger,
  type Metrics,
  type ServiceClient,
  type ServiceRequest,
  type ServiceResponse,
} from '@affiliate/platform';
import { UPSTREAM_NAMES, type UpstreamName } from '../proxy/route-table';
import { UpstreamTargets } from '../proxy/upstream-targets';

/** One service as the gateway itself calls it (the portal, the portal-session route): with the internal credential and a program scope. */
export type ServiceCall = { request<T = unknown>(request: ServiceRequest): Promise<ServiceResponse<T>> };
export type ServiceCalls = Record<UpstreamName, ServiceCall>;

export type ServiceCallsOptions = {
  upstreams: Record<UpstreamName, string>;
  internalToken: string;
  timeoutMs: number;
  logger: Logger;
  metrics: Metrics;
};

/**
 * The platform's service client (circuit per program, 5xx as 503) for each service; where a setting
 * names several replicas, calls take them in turn as the proxy's do (UpstreamTargets).
 */
export function createServiceCalls(options: ServiceCallsOptions): ServiceCalls & { shutdown: () => void } {
  const clients: ServiceClient[] = [];
  const calls = Object.fromEntries(
    UPSTREAM_NAMES.map((name) => {
      const targets = new UpstreamTargets(options.upstreams[name]);
      const byUrl = new Map(
        targets.urls.map((url) => {
          const client = createServiceClient({
            name,
            baseUrl: url,
            internalToken: options.internalToken,
            logger: options.logger,
            timeoutMs: options.timeoutMs,
            metrics: options.metrics.circuits,
          });
          clients.push(client);
          return [url, client] as const;
        }),
      );
      const call: ServiceCall = { request: (request) => (byUrl.get(targets.pick()) as ServiceClient).request(request) };
      return [name, call];
    }),
  ) as ServiceCalls;
  return { ...calls, shutdown: () => clients.forEach((client) => client.shutdown()) };
}
