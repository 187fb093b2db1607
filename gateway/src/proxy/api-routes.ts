import { NUMBERED_ERROR_OPERATIONS } from '@affiliate/contracts';
import {
  API_KEY_ID_HEADER,
  API_KEY_PREFIX_HEADER,
  createRouter,
  AppError,
  FORWARDED_PREFIX_HEADER,
  INTERNAL_TOKEN_HEADER,
  MAX_WEBHOOK_ENDPOINTS_HEADER,
  notFound,
  PROGRAM_ID_HEADER,
  REQUEST_ID_HEADER,
  type Logger,
} from '@affiliate/platform';
import express, { type Router, type RequestHandler } from 'express';
import type { ProgramAuditLog } from '../admin/program-audit-log';
import type { ProgramRepository } from '../admin/program-model';
import type { PublishableKeyModel } from '../admin/publishable-keys';
import { authenticate, callerOf, deciderOf } from '../auth/authenticate';
import { requireScopes, sensitiveBody } from '../auth/scopes';
import { browserPreflight, credentialScope, narrowAnswerOf } from '../browser/browser-routes';
import type { KnownOrigins } from '../browser/known-origins';
import type { KeyDirectory } from '../auth/key-directory';
import type { RateLimit } from '../config';
import type { IdempotencyRecordModel } from '../idempotency/idempotency-record';
import { idempotency, idempotentForwardingOf } from '../idempotency/middleware';
import type { PortalSessions } from '../portal/portal-sessions';
import type { ServiceCalls } from '../portal/service-calls';
import { programApiRoutes } from '../program-api/routes';
import { FailedAuthentication, rateLimit } from '../rate-limit/middleware';
import type { RateLimits } from '../rate-limit/rate-limiter';
import type { TeamSessions } from '../team/team-sessions';
import { metricsRouteOf, PUBLIC_PREFIX, routeOf, type Route, type UpstreamName } from './route-table';
import type { UpstreamProxy } from './upstream-proxy';

export type ApiRoutesOptions = {
  keys: KeyDirectory;
  rateLimits: RateLimits;
  defaultRateLimit: RateLimit;
  /** Failed authentications allowed per client address before 429. */
  failedAuthLimit: RateLimit;
  idempotencyRecords: IdempotencyRecordModel;
  upstreams: Record<UpstreamName, UpstreamProxy>;
  internalToken: string;
  bodyLimit: string;
  upstreamTimeoutMs: number;
  programs: ProgramRepository;
  publishableKeys: PublishableKeyModel;
  /** Browser calls allowed per publishable key and client address. */
  browserAddressLimit: RateLimit;
  /** After a program changes its own settings or keys. */
  onProgramChange: () => void;
  knownOrigins: KnownOrigins;
  /** Where sensitive acts of the program's keys are recorded. */
  programAudit: ProgramAuditLog;
  logger: Logger;
  portalSessions: PortalSessions;
  services: ServiceCalls;
  /** Team members' console sessions: the session cookie authenticates a request without an Authorization header. */
  teamSessions: TeamSessions;
};

/**
 * Names the operation for metrics, and gives DELETE /coupons and PUT /referrals their numbered
 * error shape, whoever produces the error (gateway or service).
 */
const describeOperation: RequestHandler = (request, response, next) => {
  response.locals.metricsRoute = metricsRouteOf(request.path);
  if (NUMBERED_ERROR_OPERATIONS.includes(`${request.method} ${request.path.replace(/\/$/, '')}`)) response.locals.errorShape = 'numbered';
  next();
};

/** The body as bytes, bounded; an unreadable body (bad gzip, wrong length) is the client's 400, never a 500. */
export function readBody(limit: string): RequestHandler {
  const raw = express.raw({ type: () => true, limit });
  return (request, response, next) =>
    raw(request, response, (error?: unknown) => {
      const status = (error as { status?: unknown } | undefined)?.status;
      if (error && typeof (error as { type?: unknown }).type !== 'string' && typeof status === 'number' && status < 500) {
        return next(
          new AppError(status, `Request body could not be read: ${(error as Error).message}`, {
            code: status === 413 ? 'body_too_large' : status === 415 ? 'unsupported_media_type' : 'body_malformed',
          }),
        );
      }
      next(error);
    });
}

const matchRoute: RequestHandler = (request, response, next) => {
  // A browser route was matched (and its body rewritten) by the credential's scope.
  if (response.locals.route) return next();
  const route = routeOf(request.path);
  if (!route) throw notFound(`No route for ${request.method} ${PUBLIC_PREFIX}${request.path}`, 'route_missing');
  response.locals.route = route;
  next();
};

/**
 * /api/v1: authenticate (an API key, or a team member's console session), route, rate limit, read the body (bounded), idempotency, proxy. No JSON
 * parser here: the body is read as bytes and re-sent untouched, so the services parse it themselves.
 */
export function apiRoutes(options: ApiRoutesOptions): Router {
  const router = createRouter();
  const limited = rateLimit(options.rateLimits, options.defaultRateLimit);
  router.use(describeOperation);
  router.use(browserPreflight(options.knownOrigins));
  router.use(
    authenticate(options.keys, new FailedAuthentication(options.rateLimits, options.failedAuthLimit, 'api'), options.teamSessions),
  );
  router.use(credentialScope({ rateLimits: options.rateLimits, browserAddressLimit: options.browserAddressLimit }));
  const scopes = { audit: options.programAudit, logger: options.logger };
  router.use(requireScopes(scopes));
  router.use(
    programApiRoutes({
      programs: options.programs,
      publishableKeys: options.publishableKeys,
      programAudit: options.programAudit,
      rateLimit: limited,
      bodyLimit: options.bodyLimit,
      idempotencyRecords: options.idempotencyRecords,
      idempotencyAbandonedAfterMs: options.upstreamTimeoutMs * 3,
      onChange: options.onProgramChange,
      portalSessions: options.portalSessions,
      services: options.services,
    }),
  );
  router.use(matchRoute);
  router.use(limited);
  router.use(readBody(options.bodyLimit));
  router.use(sensitiveBody(scopes));
  router.use(idempotency(options.idempotencyRecords, options.upstreamTimeoutMs * 3));
  router.use((request, response) => {
    const route = response.locals.route as Route;
    return options.upstreams[route.upstream].forward(request, response, {
      programId: callerOf(response).programId,
      headers: {
        [INTERNAL_TOKEN_HEADER]: options.internalToken,
        [PROGRAM_ID_HEADER]: callerOf(response).programId,
        [MAX_WEBHOOK_ENDPOINTS_HEADER]: String(callerOf(response).maxWebhookEndpoints),
        [REQUEST_ID_HEADER]: String(response.locals.requestId),
        [FORWARDED_PREFIX_HEADER]: PUBLIC_PREFIX,
        // Who decides, for what a service records by key (a commission released or voided): the key, or
        // in a console session the member (its id `mbr_…` and email).
        [API_KEY_ID_HEADER]: deciderOf(callerOf(response)).id,
        [API_KEY_PREFIX_HEADER]: deciderOf(callerOf(response)).label,
      },
      body: Buffer.isBuffer(request.body) ? request.body : undefined,
      errorShape: response.locals.errorShape,
      ...(narrowAnswerOf(response) ? { capture: narrowAnswerOf(response) } : idempotentForwardingOf(response)),
    });
  });
  return router;
}
