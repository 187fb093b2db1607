import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The metrics catalogue: every name a component exports is defined here, so that the alerting rules
 * and the dashboard in deploy/monitoring can be checked against one list (deploy/test). Labels are
 * bounded by the code, never by data: a route template, a queue this code subscribes, an upstream
 * this code calls, an outcome or reason from a fixed list. No program, endpoint or URL is a label.
 */

/** What waits in the outbox: written, not yet confirmed by the broker and cleared. */
export type OutboxBacklog = { pending: number; oldestSince: number | undefined };

/** Instruments of the outbox relay (events/outbox.ts). */
export type OutboxMetrics = {
  published: (events: number) => void;
  failed: () => void;
  /** Read at scrape time (at most once per scrape for both gauges). */
  watch: (backlog: () => OutboxBacklog | Promise<OutboxBacklog>) => void;
};

export type ConsumerOutcome = 'handled' | 'duplicate';
export type RetryReason = 'handler_failed' | 'claim_failed' | 'in_progress_elsewhere';
export type DeadLetterReason = 'attempts_exhausted' | 'poison';

/** Instruments of the event consumers (events/bus.ts); `queue` is the subscription's name, a constant of the code. */
export type ConsumerMetrics = {
  consumed: (queue: string, outcome: ConsumerOutcome) => void;
  redelivered: (queue: string) => void;
  retried: (queue: string, reason: RetryReason) => void;
  deadLettered: (queue: string, reason: DeadLetterReason) => void;
};

export type CircuitCounts = { open: number; halfOpen: number; closed: number };

/** Instruments of the keyed circuit breakers (http/keyed-circuits.ts); `upstream` is the callee's name, a constant of the code. */
export type CircuitMetrics = {
  opened: (upstream: string) => void;
  /** Counted at scrape time from the circuits kept in memory; returns the way to stop counting them. */
  track: (upstream: string, counts: () => CircuitCounts) => () => void;
};

export type ShedReason = 'queue_full' | 'wait_timeout' | 'deadline' | 'webhook_backlog' | 'outbox_age';
export type UpstreamShedReason = 'in_flight_cap' | 'no_connection';

/** The gateway's admission towards each upstream (its shared connection pool), `upstream` a constant of the route table. */
export type UpstreamMetrics = {
  waiting: (upstream: string, queued: number) => void;
  shed: (upstream: string, reason: UpstreamShedReason) => void;
};

const seconds = (milliseconds: number) => Math.max(0, milliseconds) / 1000;

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
  const waiting = new Gauge({
    name: 'http_requests_waiting',
    help: 'Requests waiting for a turn (the admission queue depth)',
    registers: [registry],
  });
  const admission = (running: number, queued: number) => {
    inProgress.set(running);
    waiting.set(queued);
  };
  const sheds = new Counter({
    name: 'http_requests_shed_total',
    help: 'Requests answered 503 with Retry-After instead of being run, by reason: admission control (queue_full, wait_timeout, deadline), or an event-creating write refused while events wait (webhook_backlog, outbox_age)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const shed = (reason: ShedReason) => sheds.inc({ reason });

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

  return {
    registry,
    middleware,
    admission,
    shed,
    upstreams: upstreamMetrics(registry),
    outbox: outboxMetrics(registry),
    consumer: consumerMetrics(registry),
    circuits: circuitMetrics(registry),
  };
}

function upstreamMetrics(registry: Registry): UpstreamMetrics {
  const waiting = new Gauge({
    name: 'upstream_requests_waiting',
    help: "Calls waiting for one of the gateway's connections to the upstream (programs take turns)",
    labelNames: ['upstream'],
    registers: [registry],
  });
  const sheds = new Counter({
    name: 'upstream_requests_shed_total',
    help: "Calls the gateway answered 503 with Retry-After without sending them, by reason (in_flight_cap: the program's cap; no_connection: none free before the deadline)",
    labelNames: ['upstream', 'reason'],
    registers: [registry],
  });
  return { waiting: (upstream, queued) => waiting.set({ upstream }, queued), shed: (upstream, reason) => sheds.inc({ upstream, reason }) };
}

function outboxMetrics(registry: Registry): OutboxMetrics {
  const backlogs: (() => OutboxBacklog | Promise<OutboxBacklog>)[] = [];
  const readAll = async () => {
    let pending = 0;
    let oldestSince: number | undefined;
    for (const current of await Promise.all(backlogs.map((backlog) => backlog()))) {
      pending += current.pending;
      if (current.oldestSince !== undefined && (oldestSince === undefined || current.oldestSince < oldestSince))
        oldestSince = current.oldestSince;
    }
    return { pending, oldestSince };
  };
  // Both gauges of one scrape share one read (the relay's may be a database read).
  let reading: { at: number; backlog: Promise<OutboxBacklog> } | undefined;
  const read = () => {
    if (!reading || Date.now() - reading.at > 1000) reading = { at: Date.now(), backlog: readAll() };
    return reading.backlog;
  };
  // The service's outbox as a whole, the same value from every replica: aggregate with max(), not
  // sum(), which would count it once per replica (deploy/monitoring).
  new Gauge({
    name: 'outbox_documents_pending',
    help: "Documents of the service whose events wait to be published (written and not yet confirmed and cleared); every replica reports the whole service's, so aggregate with max()",
    registers: [registry],
    async collect() {
      this.set((await read()).pending);
    },
  });
  new Gauge({
    name: 'outbox_oldest_pending_age_seconds',
    help: "How long the service's oldest document with unpublished events has waited (0 when none wait); the same from every replica, so aggregate with max()",
    registers: [registry],
    async collect() {
      const { oldestSince } = await read();
      this.set(oldestSince === undefined ? 0 : seconds(Date.now() - oldestSince));
    },
  });
  const published = new Counter({
    name: 'outbox_events_published_total',
    help: 'Events the relay published and the broker confirmed',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'outbox_publish_failures_total',
    help: 'Documents the relay failed to publish or clear (broker or database away); each is tried again',
    registers: [registry],
  });
  return { published: (events) => published.inc(events), failed: () => failures.inc(), watch: (backlog) => void backlogs.push(backlog) };
}

function consumerMetrics(registry: Registry): ConsumerMetrics {
  const consumed = new Counter({
    name: 'events_consumed_total',
    help: 'Events a consumer acknowledged, by queue and outcome (handled; duplicate: handled before, acknowledged without running the handler)',
    labelNames: ['queue', 'outcome'],
    registers: [registry],
  });
  const redelivered = new Counter({
    name: 'events_redelivered_total',
    help: 'Messages received again: redelivered by the broker or back from the retry queue',
    labelNames: ['queue'],
    registers: [registry],
  });
  const retried = new Counter({
    name: 'events_retried_total',
    help: 'Messages sent to the retry queue, by reason (handler_failed, claim_failed, in_progress_elsewhere)',
    labelNames: ['queue', 'reason'],
    registers: [registry],
  });
  const dead = new Counter({
    name: 'events_dead_lettered_total',
    help: 'Messages sent to the dead-letter queue, by reason (attempts_exhausted, poison)',
    labelNames: ['queue', 'reason'],
    registers: [registry],
  });
  return {
    consumed: (queue, outcome) => consumed.inc({ queue, outcome }),
    redelivered: (queue) => redelivered.inc({ queue }),
    retried: (queue, reason) => retried.inc({ queue, reason }),
    deadLettered: (queue, reason) => dead.inc({ queue, reason }),
  };
}

function circuitMetrics(registry: Registry): CircuitMetrics {
  const sources = new Set<{ upstream: string; counts: () => CircuitCounts }>();
  new Gauge({
    name: 'circuit_breakers',
    help: 'Circuit breakers kept towards each upstream (one per program, or per endpoint towards subscribers), by state: how many programs fail fast there',
    labelNames: ['upstream', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { upstream, counts } of sources) {
        const current = counts();
        this.inc({ upstream, state: 'open' }, current.open);
        this.inc({ upstream, state: 'half_open' }, current.halfOpen);
        this.inc({ upstream, state: 'closed' }, current.closed);
      }
    },
  });
  const opened = new Counter({
    name: 'circuit_breaker_opened_total',
    help: 'Times a circuit towards the upstream opened',
    labelNames: ['upstream'],
    registers: [registry],
  });
  return {
    opened: (upstream) => opened.inc({ upstream }),
    track: (upstream, counts) => {
      const source = { upstream, counts };
      sources.add(source);
      return () => void sources.delete(source);
    },
  };
}

export type DeliveryOutcome = 'succeeded' | 'failed';
export type AttemptOutcome = 'succeeded' | 'failed' | 'circuit_open';
export type DisableReason = 'gone' | 'failing';

/** Seconds from an event's occurrence to its webhook's successful delivery: retries last up to days. */
export const EVENT_TO_DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600, 86_400];

/** The webhook dispatcher's instruments, on its registry. */
export function createWebhookMetrics(registry: Registry) {
  const attempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Scheduled webhook attempts by outcome (succeeded, failed, circuit_open: held back without sending)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook deliveries that ended, by outcome (succeeded; failed: retry schedule used up, 410 Gone, or the endpoint disabled or deleted)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'webhook_event_to_delivery_seconds',
    help: "Time from an event's occurrence to the successful delivery of its webhook, retries included",
    buckets: EVENT_TO_DELIVERY_BUCKETS,
    registers: [registry],
  });
  const disabled = new Counter({
    name: 'webhook_endpoints_disabled_total',
    help: 'Endpoints the dispatcher disabled, by reason (gone: answered 410; failing: every delivery failed for the set time)',
    labelNames: ['reason'],
    registers: [registry],
  });
  type Backlog = { due: number; oldestDueAt: number | undefined };
  let backlog: () => Promise<Backlog> = () => Promise.resolve({ due: 0, oldestDueAt: undefined });
  // Both gauges of one scrape share one read of the schedule; a read that fails leaves the last values.
  let reading: { at: number; backlog: Promise<Backlog | undefined> } | undefined;
  const read = () => {
    if (!reading || Date.now() - reading.at > 1000) reading = { at: Date.now(), backlog: backlog().catch(() => undefined) };
    return reading.backlog;
  };
  // Read from the database, the same from every replica: aggregate with max(), not sum().
  new Gauge({
    name: 'webhook_deliveries_due',
    help: 'Deliveries due and not being sent, across every dispatcher replica (read from the schedule); the same from every replica, so aggregate with max()',
    registers: [registry],
    async collect() {
      const current = await read();
      if (current) this.set(current.due);
    },
  });
  new Gauge({
    name: 'webhook_oldest_due_age_seconds',
    help: 'How long the oldest delivery due and not being sent has waited (0 when none); the same from every replica, so aggregate with max()',
    registers: [registry],
    async collect() {
      const current = await read();
      if (current) this.set(current.oldestDueAt === undefined ? 0 : seconds(Date.now() - current.oldestDueAt));
    },
  });
  return {
    attempted: (outcome: AttemptOutcome) => attempts.inc({ outcome }),
    ended: (outcome: DeliveryOutcome) => deliveries.inc({ outcome }),
    deliveredAfter: (occurredAt: number) => latency.observe(seconds(Date.now() - occurredAt)),
    disabled: (reason: DisableReason) => disabled.inc({ reason }),
    /** The schedule's backlog, read at scrape time (at most once per second for both gauges). */
    watchBacklog: (read: typeof backlog) => {
      backlog = read;
    },
  };
}

export type WebhookMetrics = ReturnType<typeof createWebhookMetrics>;
export type PayoutRunOutcome = 'completed' | 'busy' | 'lost_lease' | 'failed';

/** The sale service's payout runs. */
export function createPayoutMetrics(registry: Registry) {
  const runs = new Counter({
    name: 'payout_runs_total',
    help: "Payout runs (POST /payouts) by outcome (completed; busy: another run held the program's turn; lost_lease: stalled and taken over; failed)",
    labelNames: ['outcome'],
    registers: [registry],
  });
  const payouts = new Counter({
    name: 'payouts_created_total',
    help: 'Payouts that payout runs created, drafts of dead runs finished included',
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'payout_run_duration_seconds',
    help: 'How long payout runs took, the wait for their turn included',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return {
    ran: (outcome: PayoutRunOutcome, startedAt: number, created: number) => {
      runs.inc({ outcome });
      payouts.inc(created);
      duration.observe(seconds(Date.now() - startedAt));
    },
  };
}

export type PayoutMetrics = ReturnType<typeof createPayoutMetrics>;
export type Metrics = ReturnType<typeof createMetrics>;
