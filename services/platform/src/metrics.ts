import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process, labelled with the component, scraped at GET /metrics. */
export function createMetrics(service: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });

  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route, method and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });

  // What admission control holds (http/admission.ts): a queue that keeps growing is the sign of overload.
  const inProgress = new Gauge({ name: 'http_requests_in_progress', help: 'Requests being worked on', registers: [registry] });
  const waiting = new Gauge({ name: 'http_requests_waiting', help: 'Requests waiting for a turn', registers: [registry] });
  const admission = (running: number, queued: number) => {
    inProgress.set(running);
    waiting.set(queued);
  };

  const middleware: RequestHandler = (request, response, next) => {
    const stop = httpDuration.startTimer();
    response.on('finish', () => {
      // Route templates only, never the raw URL: a path nobody routed (a 404, or a 401 before any
      // route matched) is one `unmatched` series, so unauthenticated traffic cannot grow memory.
      // A proxy (the gateway) names the route itself, since it has no express route per endpoint.
      const named = response.locals.metricsRoute as string | undefined;
      const matched = (request.route as { path?: string } | undefined)?.path;
      const route = named ?? (matched === undefined ? 'unmatched' : `${request.baseUrl}${matched}`);
      const labels = { method: request.method, route, status: String(response.statusCode) };
      stop(labels);
      httpRequests.inc(labels);
    });
    next();
  };

  return { registry, middleware, admission };
}

export type Metrics = ReturnType<typeof createMetrics>;
