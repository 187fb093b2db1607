import { Server as NetServer, type AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Router } from 'express';
import type { Connection } from 'mongoose';
import { BacklogNews } from './events/backlog-news';
import { EventBus } from './events/bus';
import { OutboxRelay, outboxModelsOf } from './events/outbox';
import type { AdmissionSettings } from './http/admission';
import { shedWhenBacklogged, type SheddingSettings } from './http/backlog-shedding';
import { createMetricsApp, createServiceApp } from './http/app';
import { createLogger, type Logger } from './logger';
import { createMetrics, type Metrics } from './metrics';
import { flushTraces } from './tracing';
import { connectMongo, isMongoReady, syncIndexes } from './mongo';

export type ServiceSettings = {
  name: string;
  port: number;
  /** /metrics on a listener of its own (and not on `port`); unset, /metrics is served on `port`. */
  metricsPort?: number;
  /** Listen address; loopback when not given, so a service is never reachable from outside by accident. */
  host?: string;
  mongoUrl: string;
  dbName: string;
  amqpUrl: string;
  exchange: string;
  internalToken: string;
  logLevel?: string;
  /** How often the relay sweeps for events a crash left behind (default 60 s; what it failed to publish itself is retried every 5 s by id). */
  outboxSweepIntervalMs?: number;
  queueType?: 'classic' | 'quorum';
  /** How many requests run at once, wait, and for how long, before a busy service answers 503. */
  admission?: AdmissionSettings;
  /** Bounds past which event-creating writes are refused (503, Retry-After); unset, none are. */
  shedding?: SheddingSettings;
  /** On stop, how long /readyz answers 503 while requests are still served, before draining (default 0). */
  shutdownDelayMs?: number;
};

/** What every service gets from the platform: its database, the bus, its outbox relay, logs and metrics. */
export type ServiceContext = {
  settings: ServiceSettings;
  logger: Logger;
  metrics: Metrics;
  connection: Connection;
  bus: EventBus;
  relay: OutboxRelay;
};

/** What a service adds: its routes and its event subscriptions (its models with an outbox are found on the connection). */
export type ServiceParts = {
  routes: Router;
  /** Brings data an older version wrote to the current shape; runs before the indexes are built. */
  prepare?: () => Promise<void>;
  subscribe?: () => Promise<void>;
  close?: () => Promise<void>;
  /**
   * Writes (`POST /clicks`) that create no event, served however far behind the events are; `every`
   * where no write does (the dispatcher). Every other write outside /internal/ is refused while the
   * events are behind (`ServiceSettings.shedding`).
   */
  writesWithoutEvents?: readonly string[] | 'every';
};

export type RunningService = {
  context: ServiceContext;
  server: Server;
  port: number;
  url: string;
  /** Where /metrics is served: its own listener when `metricsPort` is set, else `url`. */
  metricsUrl: string;
  stop: () => Promise<void>;
};

/**
 * Starts a service: connect to MongoDB (retrying), build indexes, connect the bus, start the relay
 * and the subscriptions, then listen. Tests call it with port 0; start.ts calls it from config.
 */
export async function bootService(
  settings: ServiceSettings,
  build: (context: ServiceContext) => ServiceParts | Promise<ServiceParts>,
): Promise<RunningService> {
  const logger = createLogger(settings.name, settings.logLevel);
  const metrics = createMetrics(settings.name);
  const connection = await connectMongo({ url: settings.mongoUrl, dbName: settings.dbName, logger });
  const bus = new EventBus({
    url: settings.amqpUrl,
    exchange: settings.exchange,
    logger,
    queueType: settings.queueType,
    metrics: metrics.consumer,
  });
  const relay = new OutboxRelay({ bus, logger, sweepIntervalMs: settings.outboxSweepIntervalMs, metrics: metrics.outbox });
  const context: ServiceContext = { settings, logger, metrics, connection, bus, relay };
  const parts = await build(context);
  // Every model that carries an outbox is relayed: none can be forgotten.
  relay.watch(...outboxModelsOf(connection));

  await parts.prepare?.();
  await syncIndexes(connection);
  if (!(await bus.waitForConnect(10_000))) logger.warn('starting without RabbitMQ; events wait in the outbox until it is back');
  await parts.subscribe?.();
  context.relay.start();
  // Learned from the broker, never asked of the dispatcher: a dispatcher that is down refuses nothing here.
  const shedding = settings.shedding && parts.writesWithoutEvents !== 'every' ? settings.shedding : undefined;
  const backlogNews = shedding ? new BacklogNews(bus, settings.exchange, logger) : undefined;
  backlogNews?.start();

  const shutdown = new ShutdownDelay(settings.shutdownDelayMs ?? 0);
  const app = createServiceApp({
    name: settings.name,
    admission: settings.admission,
    logger,
    metrics,
    routes: parts.routes,
    internalToken: settings.internalToken,
    serveMetrics: settings.metricsPort === undefined,
    shedding:
      shedding && backlogNews
        ? shedWhenBacklogged({
            settings: shedding,
            serviceName: settings.name,
            logger,
            webhookBacklog: () => backlogNews.current(),
            outboxOldestSince: () => relay.backlog().oldestSince,
            writesWithoutEvents: parts.writesWithoutEvents === 'every' ? [] : (parts.writesWithoutEvents ?? []),
            onShed: metrics.shed,
          })
        : undefined,
    // Ready means this process can serve: its own database, and, only where it consumes events, a
    // consumer attached to each of its queues (what it publishes waits in the outbox). Never another
    // service: one dead service must not take every caller out of its load balancer.
    readiness: async () => ({
      accepting: !shutdown.begun,
      mongo: isMongoReady(connection),
      ...(parts.subscribe ? { rabbitmq: bus.consumersAttached() } : {}),
    }),
  });
  const listen = (handler: typeof app, port: number) =>
    new Promise<Server>((resolve, reject) => {
      // Express 5 calls back with the error when the port cannot be bound (EADDRINUSE): refuse to start, named.
      const listening = handler.listen(port, settings.host ?? '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(listening)));
    });
  const server = await listen(app, settings.port);
  const metricsServer = settings.metricsPort === undefined ? undefined : await listen(createMetricsApp(metrics), settings.metricsPort);
  // The gateway pools connections to us; closing idle ones before it does would make it write to a
  // socket we just closed (ECONNRESET). Keep them longer than any caller's pool keeps them idle.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  shutdown.attach(server);
  const port = (server.address() as AddressInfo).port;
  const metricsPort = metricsServer ? (metricsServer.address() as AddressInfo).port : port;
  logger.info({ host: settings.host ?? '127.0.0.1', port, metricsPort }, `${settings.name} listening`);

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Not ready first, still serving, so load balancers take us out before we stop listening.
      await shutdown.begin();
      // Stop taking requests, let in-flight ones finish, then flush the outbox and close the rest.
      await shutdown.drain(server);
      // Handlers finish while the database is still there; what they write is relayed below.
      await bus.stopConsuming();
      // Scraped to the end: the drain above shows in the metrics.
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      await context.relay.stop();
      await context.relay.drain().catch(() => undefined);
      await backlogNews?.stop();
      await parts.close?.();
      await bus.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
      logger.info(`${settings.name} stopped`);
    })();
    return stopping;
  };

  return { context, server, port, url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}`, stop };
}

/**
 * A graceful stop: readiness fails at once, and requests are still served for `delayMs`, the time a
 * load balancer takes to notice and stop sending new ones. Then drain: stop listening and let the
 * requests in flight finish.
 *
 * From the moment the stop begins every answer carries `Connection: close`. Callers that pool
 * connections (a gateway, a service client, a load balancer's keep-alive) would otherwise keep
 * sending on a connection pinned to this process until the drain cuts it under a request, which
 * the caller sees as a reset and, for a POST, cannot safely retry. With it, each caller's next
 * request opens a new connection, which the load balancer gives to a replica that is ready.
 */
/** The longest a drain leaves idle keep-alive connections to their clients (see `ShutdownDelay.drain`). */
const DRAIN_IDLE_GRACE_MS = 5_000;

export class ShutdownDelay {
  private started = false;

  constructor(readonly delayMs: number) {}

  /** True from the moment the stop began: /readyz answers 503. */
  get begun(): boolean {
    return this.started;
  }

  /** Marks every answer of `server` given after the stop began as the connection's last. */
  attach(server: Server): void {
    server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      if (this.started) response.setHeader('connection', 'close');
    });
  }

  async begin(): Promise<void> {
    this.started = true;
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
  }

  /**
   * Stops listening; busy connections close after their answer (which says `Connection: close`),
   * idle ones are left to their clients for up to `idleGraceMs`, then closed. Resolves once every
   * connection is gone.
   *
   * Closing an idle keep-alive connection races a client that is writing its next request on it:
   * the client sees the connection cut under its request (a CI run's rolling restart saw one). So
   * this stops listening with net's `close`, not http's, which would close idle connections at
   * once. A client that honours the server's `Keep-Alive: timeout` hint (undici, fetch) closes an
   * idle connection before the server's own keep-alive timer would, so within the grace it has
   * closed its own; the grace caps the wait for those that keep connections longer (the gateway's
   * pool to a service, whose keep-alive is 65 s), which then meet the old race.
   */
  drain(server: Server, idleGraceMs = Math.min(server.keepAliveTimeout, DRAIN_IDLE_GRACE_MS)): Promise<void> {
    return new Promise<void>((resolve) => {
      const closeIdle = setTimeout(() => server.closeIdleConnections(), idleGraceMs);
      NetServer.prototype.close.call(server, () => {
        clearTimeout(closeIdle);
        resolve();
      });
    });
  }
}

/**
 * SIGTERM and SIGINT stop the service gracefully; a second signal or a stuck shutdown exits hard.
 * `graceMs` counts from the end of the shutdown delay, which comes on top.
 */
export function stopOnSignals(service: { stop: () => Promise<void> }, logger: Logger, graceMs = 15_000, shutdownDelayMs = 0): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(1);
    signalled = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, graceMs + shutdownDelayMs).unref();
    service.stop().then(
      // Spans still in the exporter's buffer would be lost with the process.
      () => flushTraces().then(() => process.exit(0)),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // A promise nobody handles means a state nobody knows: end the process, as Node's default does, so
  // the supervisor starts a clean one; logged first, with the request context, so the cause is known.
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled rejection: exiting');
    process.exit(1);
  });
}
