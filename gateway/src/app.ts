import { AppError, errorHandler, httpLogging, requestId, type Logger, type Metrics } from '@affiliate/platform';
import express, { type Express } from 'express';
import type { AdminStore } from './admin/api-keys';
import { adminRoutes } from './admin/routes';
import type { KeyDirectory } from './auth/key-directory';
import type { KnownOrigins } from './browser/known-origins';
import type { GatewaySettings } from './config';
import { consoleRoutes } from './console/routes';
import { docsRoutes } from './docs/routes';
import type { PortalSessions } from './portal/portal-sessions';
import { portalRoutes } from './portal/portal-routes';
import type { ServiceCalls } from './portal/service-calls';
import type { IdempotencyRecordModel } from './idempotency/idempotency-record';
import { apiRoutes } from './proxy/api-routes';
import { integrationRoutes } from './proxy/integration-routes';
import { PUBLIC_PREFIX, type UpstreamName } from './proxy/route-table';
import type { UpstreamProxy } from './proxy/upstream-proxy';
import { addressRateLimit } from './rate-limit/middleware';
import { signupRoutes } from './signup/routes';
import type { TeamAccounts } from './team/team-accounts';
import { DEFAULT_TEAM_LOGIN_LIMITS, teamRoutes } from './team/team-routes';
import type { TeamSessions } from './team/team-sessions';
import { trackingScriptRoutes } from './tracking/routes';
import type { RateLimits } from './rate-limit/rate-limiter';

export type GatewayDeps = {
  settings: GatewaySettings;
  logger: Logger;
  metrics: Metrics;
  store: AdminStore;
  keys: KeyDirectory;
  rateLimits: RateLimits;
  idempotencyRecords: IdempotencyRecordModel;
  upstreams: Record<UpstreamName, UpstreamProxy>;
  /** Named checks of this process alone (never an upstream); the gateway is ready when all pass. */
  readiness: () => Promise<Record<string, boolean>>;
  /** False from the moment a stop began: read on every /readyz, never from the shared answer. */
  accepting: () => boolean;
  onProgramChange: () => void;
  /** Origins some program allows: the browser routes' CORS preflights are answered for these only. */
  knownOrigins: KnownOrigins;
  /** Affiliate portal sessions, and the services the portal calls itself (with the session's affiliate and program). */
  portalSessions: PortalSessions;
  services: ServiceCalls;
  /** Console sessions of the programs' team members (issue 32). */
  teamSessions: TeamSessions;
  teamAccounts: TeamAccounts;
};

/** The gateway's public express app: probes, docs, the admin API and the authenticated proxy to the services. */
export function createGateway(deps: GatewayDeps): Express {
  const { settings, logger, metrics } = deps;
  const app = express();
  app.disable('x-powered-by');
  // As every service's (createRouter): a path is matched in its exact case, never a variant of it.
  app.set('case sensitive routing', true);
  app.set('query parser', 'simple');
  app.set('trust proxy', settings.trustProxy);
  app.use(requestId);
  app.use(httpLogging(logger));
  app.use(metrics.middleware);

  app.get('/healthz', (_request, response) => {
    response.json({ status: 'ok' });
  });
  const anonymous = addressRateLimit(deps.rateLimits, settings.anonymousRateLimit);
  app.use(['/docs', '/console', '/js', `${PUBLIC_PREFIX}/openapi.json`], anonymous);
  // Probes are not limited per address, so a flood of them must not become a flood of checks: one
  // check at a time, its answer shared for a second (the database's; the stop's flip is read each time).
  let readiness: { at: number; checks: Promise<Record<string, boolean>> } | undefined;
  const currentReadiness = () => {
    if (!readiness || Date.now() - readiness.at > 1000) {
      const checks = deps.readiness();
      readiness = { at: Date.now(), checks };
      checks.catch(() => (readiness = undefined));
    }
    return readiness.checks;
  };
  app.get('/readyz', async (_request, response) => {
    // The stop's flip is never cached: the first probe after SIGTERM already answers 503.
    const checks = { accepting: deps.accepting(), ...(await currentReadiness()) };
    const ready = Object.values(checks).every(Boolean);
    response.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  app.use(docsRoutes());
  app.use(consoleRoutes());
  app.use(trackingScriptRoutes());
  app.use(
    portalRoutes({
      sessions: deps.portalSessions,
      programs: deps.store.programs,
      services: deps.services,
      anonymous,
      audit: deps.store.programAudit,
      logger,
    }),
  );
  app.use(
    '/admin/v1',
    adminRoutes({
      store: deps.store,
      adminToken: settings.adminToken,
      rateLimits: deps.rateLimits,
      failedAuthLimit: settings.failedAuthLimits.admin,
      addressLimit: anonymous,
      logger,
      bodyLimit: settings.bodyLimit,
      onChange: deps.onProgramChange,
      services: deps.services,
      team: deps.teamAccounts,
    }),
  );
  app.use(
    integrationRoutes({
      programs: deps.store.programs,
      sale: deps.upstreams.sale,
      anonymous,
      internalToken: settings.internalToken,
      bodyLimit: settings.bodyLimit,
    }),
  );
  app.use(
    signupRoutes({
      programs: deps.store.programs,
      affiliate: deps.upstreams.affiliate,
      rateLimits: deps.rateLimits,
      signupAddressLimit: settings.signupAddressRateLimit,
      anonymous,
      internalToken: settings.internalToken,
    }),
  );
  // The console's team routes (a member's session, never an API key) come before the proxy, which never sees them.
  app.use(
    PUBLIC_PREFIX,
    teamRoutes({
      accounts: deps.teamAccounts,
      sessions: deps.teamSessions,
      store: deps.store,
      rateLimits: deps.rateLimits,
      loginLimits: settings.teamLoginLimits ?? DEFAULT_TEAM_LOGIN_LIMITS,
      anonymous,
      onChange: deps.onProgramChange,
      logger,
    }),
  );
  app.use(
    PUBLIC_PREFIX,
    apiRoutes({
      keys: deps.keys,
      rateLimits: deps.rateLimits,
      defaultRateLimit: settings.defaultRateLimit,
      failedAuthLimit: settings.failedAuthLimits.api,
      idempotencyRecords: deps.idempotencyRecords,
      upstreams: deps.upstreams,
      internalToken: settings.internalToken,
      bodyLimit: settings.bodyLimit,
      upstreamTimeoutMs: settings.upstreamTimeoutMs,
      programs: deps.store.programs,
      publishableKeys: deps.store.publishableKeys,
      browserAddressLimit: settings.browserAddressRateLimit,
      onProgramChange: deps.onProgramChange,
      knownOrigins: deps.knownOrigins,
      programAudit: deps.store.programAudit,
      logger,
      portalSessions: deps.portalSessions,
      services: deps.services,
      teamSessions: deps.teamSessions,
    }),
  );
  app.use(anonymous, (request, _response, next) =>
    next(new AppError(404, `No route for ${request.method} ${request.path}`, { code: 'route_missing' })),
  );
  app.use(errorHandler(logger));
  return app;
}

/** The metrics listener (/metrics alone, on its own port, which compose and the ingress never publish) is the platform's, as every service's. */
export { createMetricsApp } from '@affiliate/platform';
