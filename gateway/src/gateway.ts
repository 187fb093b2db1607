import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  connectMongo,
  createLogger,
  createMetrics,
  EventBus,
  isMongoReady,
  OutboxRelay,
  outboxModelsOf,
  ShutdownDelay,
  syncIndexes,
  type Logger,
} from '@affiliate/platform';
import type { Express } from 'express';
import Redis from 'ioredis';
import type { Connection } from 'mongoose';
import { createAdminStore, ensureBootstrapKey, type AdminStore } from './admin/api-keys';
import { ensureBootstrapOwner } from './admin/bootstrap-owner';
import { migrateSlugKeys } from './admin/program-model';
import { deleteExpired } from './admin/retention';
import { createGateway, createMetricsApp } from './app';
import { KeyDirectory } from './auth/key-directory';
import { KnownOrigins } from './browser/known-origins';
import type { GatewaySettings } from './config';
import { idempotencyRecordModel } from './idempotency/idempotency-record';
import { PortalSessions } from './portal/portal-sessions';
import { createServiceCalls } from './portal/service-calls';
import { UPSTREAM_NAMES, type UpstreamName } from './proxy/route-table';
import { createUpstreamProxy, type UpstreamProxy } from './proxy/upstream-proxy';
import { RateLimits } from './rate-limit/rate-limiter';
import { TeamAccounts } from './team/team-accounts';
import { DEFAULT_TEAM_SESSION_IDLE_MS, DEFAULT_TEAM_SESSION_MS, TeamSessions } from './team/team-sessions';

/** How soon another replica's change of allowed origins reaches this one's CORS preflights. */
const KNOWN_ORIGINS_REFRESH_MS = 5000;

export type RunningGateway = {
  settings: GatewaySettings;
  app: Express;
  server: Server;
  port: number;
  url: string;
  /** Where /metrics is served (its own listener). */
  metricsUrl: string;
  connection: Connection;
  store: AdminStore;
  bus: EventBus;
  logger: Logger;
  stop: () => Promise<void>;
};

/**
 * Connects the gateway's own database, the bus (program events leave through the outbox), Redis
 * for shared rate-limit counters when configured, then listens. Tests call it with port 0.
 */
export async function bootGateway(settings: GatewaySettings): Promise<RunningGateway> {
  const logger = createLogger('gateway', settings.logLevel);
  const metrics = createMetrics('gateway');
  const connection = await connectMongo({ url: settings.mongoUrl, dbName: settings.dbName, logger });
  const bus = new EventBus({ url: settings.amqpUrl, exchange: settings.exchange, logger, metrics: metrics.consumer });
  const relay = new OutboxRelay({ bus, logger, sweepIntervalMs: settings.outboxSweepIntervalMs, metrics: metrics.outbox });
  const store = createAdminStore({ connection, relay }, settings.auditRetentionMs);
  const idempotencyRecords = idempotencyRecordModel(connection);
  relay.watch(...outboxModelsOf(connection));
  // Made before syncIndexes, which builds the indexes of the models registered by then (autoIndex is
  // off): the members' unique email and the sessions' expiry would otherwise never exist.
  const portalSessions = new PortalSessions(connection, settings.portalLinkTtlSeconds);
  const teamSessions = new TeamSessions(connection, {
    idleMs: settings.teamSessionIdleMs ?? DEFAULT_TEAM_SESSION_IDLE_MS,
    absoluteMs: settings.teamSessionMs ?? DEFAULT_TEAM_SESSION_MS,
  });
  const teamAccounts = new TeamAccounts(connection, teamSessions);

  await migrateSlugKeys(connection);
  await syncIndexes(connection);
  if (!(await bus.waitForConnect(10_000))) logger.warn('starting without RabbitMQ; program events wait in the outbox until it is back');
  relay.start();
  if (settings.bootstrapApiKey) {
    const demoProgramId = await ensureBootstrapKey(store, settings.bootstrapApiKey, logger);
    if (settings.bootstrapOwner) await ensureBootstrapOwner(connection, store.programs, demoProgramId, settings.bootstrapOwner, logger);
  }

  const redis = settings.redisUrl ? connectRedis(settings.redisUrl, logger) : undefined;
  const upstreams = Object.fromEntries(
    UPSTREAM_NAMES.map((name) => [
      name,
      createUpstreamProxy({
        name,
        url: settings.upstreams[name],
        timeoutMs: settings.upstreamTimeoutMs,
        resetTimeoutMs: settings.circuitResetMs,
        maxSockets: settings.upstreamMaxSockets,
        maxInFlightPerProgram: settings.upstreamMaxInFlightPerProgram,
        logger,
        metrics,
      }),
    ]),
  ) as Record<UpstreamName, UpstreamProxy>;
  const services = createServiceCalls({
    upstreams: settings.upstreams,
    internalToken: settings.internalToken,
    timeoutMs: settings.upstreamTimeoutMs,
    logger,
    metrics,
  });
  const rateLimits = new RateLimits(redis);
  const knownOrigins = new KnownOrigins(store.programs, KNOWN_ORIGINS_REFRESH_MS, logger);
  knownOrigins.start();
  const keys = new KeyDirectory({
    programs: store.programs,
    apiKeys: store.apiKeys,
    publishableKeys: store.publishableKeys,
    ttlMs: settings.keyCacheTtlMs,
  });

  const shutdown = new ShutdownDelay(settings.shutdownDelayMs ?? 0);
  const app = createGateway({
    settings,
    logger,
    metrics,
    store,
    keys,
    rateLimits,
    idempotencyRecords,
    upstreams,
    // Ready means this process can serve: listening and its own database reachable. Never a
    // service behind it: a dead upstream answers 503 on its own routes, and taking every gateway
    // out of its load balancer for it would turn one outage into a total one. Redis has an
    // in-memory fallback and RabbitMQ an outbox, so neither is needed to serve.
    readiness: async () => ({ mongo: isMongoReady(connection) }),
    accepting: () => !shutdown.begun,
    knownOrigins,
    portalSessions,
    services,
    teamSessions,
    teamAccounts,
    onProgramChange: () => {
      keys.forgetAll();
      void knownOrigins.refresh();
    },
  });

  const listen = (handler: Express, port: number) =>
    new Promise<Server>((resolve, reject) => {
      // Express 5 calls back with the error when the port cannot be bound (EADDRINUSE): refuse to start, named.
      const listening = handler.listen(port, settings.host, (error?: Error) => (error ? reject(error) : resolve(listening)));
    });
  // Retention where no TTL monitor runs (the local server); on MongoDB the TTL index has usually done it already.
  const sweepAudit = () =>
    Promise.all([deleteExpired(store.auditRecords, store.auditRetentionMs), store.programAudit.deleteExpiredAcrossPrograms()]).catch(
      (error: unknown) => logger.warn({ err: error }, 'could not delete expired audit records'),
    );
  const auditSweep = setInterval(() => void sweepAudit(), settings.auditSweepIntervalMs);
  auditSweep.unref();
  const server = await listen(app, settings.port);
  shutdown.attach(server);
  const metricsServer = await listen(createMetricsApp(metrics), settings.metricsPort);
  const port = (server.address() as AddressInfo).port;
  const metricsPort = (metricsServer.address() as AddressInfo).port;
  logger.info({ host: settings.host, port, metricsPort }, 'gateway listening');

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Not ready first, still serving, so load balancers take us out before we stop listening.
      await shutdown.begin();
      await shutdown.drain(server);
      clearInterval(auditSweep);
      metricsServer.close();
      metricsServer.closeAllConnections();
      await relay.stop();
      await relay.drain().catch(() => undefined);
      for (const upstream of Object.values(upstreams)) upstream.shutdown();
      services.shutdown();
      knownOrigins.stop();
      redis?.disconnect();
      await bus.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
      logger.info('gateway stopped');
    })();
    return stopping;
  };

  return {
    settings,
    app,
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    connection,
    store,
    bus,
    logger,
    stop,
  };
}

/**
 * Commands fail fast while Redis is away (no offline queue, short timeouts) so that the insurance
 * limiter answers instead of requests waiting on a reconnect.
 */
function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 1000,
    disconnectTimeout: 200,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  let healthy = true;
  redis.on('ready', () => {
    if (!healthy) logger.info('Redis is back: rate-limit counters are shared again');
    healthy = true;
  });
  redis.on('error', (error) => {
    if (healthy) logger.warn({ err: error }, 'Redis unavailable: rate limiting falls back to in-memory counters');
    healthy = false;
  });
  return redis;
}
