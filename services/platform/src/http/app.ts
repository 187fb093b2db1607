import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { defaultErrorCodeOf, NUMBERED_ERROR_OPERATIONS, type ErrorCode } from '@affiliate/contracts';
import express, { Router, type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import pinoHttp from 'pino-http';
import { AppError, InvalidRequest, isDatabaseUnavailable, type Problem } from '../errors';
import { withRequestContext, type Logger } from '../logger';
import type { Metrics } from '../metrics';
import { admissionControl, DEFAULT_ADMISSION, type AdmissionSettings } from './admission';
import { REQUEST_ID_HEADER, requireInternalCaller } from './internal-auth';
import { jsonTextOf } from './json-text';
import { requireJsonBody } from './validation';

export type ReadinessCheck = () => Promise<Record<string, boolean>>;

export type ServiceAppOptions = {
  logger: Logger;
  metrics: Metrics;
  /** Routes behind the internal credential; everything an integrator reaches comes through here. */
  routes: Router;
  internalToken: string;
  readiness: ReadinessCheck;
  bodyLimit?: string;
  /** The service's name, as a shed request's message says it. */
  name: string;
  admission?: AdmissionSettings;
  /** False when /metrics has a listener of its own (createMetricsApp): the API port then never serves it. */
  serveMetrics?: boolean;
  /** Refuses event-creating writes while events are behind (shedWhenBacklogged); before admission, so a refused write never takes a place. */
  shedding?: RequestHandler;
};

/** Accepts a well-formed x-request-id from the caller or makes one; every log line of the request carries it. */
export const requestId: RequestHandler = (request, response, next) => {
  const presented = request.header(REQUEST_ID_HEADER);
  const id = presented && /^[\w.:-]{1,128}$/.test(presented) ? presented : randomUUID();
  response.locals.requestId = id;
  response.setHeader(REQUEST_ID_HEADER, id);
  withRequestContext({ requestId: id }, () => next());
};

/** Long enough for a database failover or a restart, short enough that a retry soon succeeds. */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

/** What every error body adds to the specification's fields (contracts/src/errors.ts). */
export type ErrorDetails = {
  code: ErrorCode;
  /** The field at fault; left out of the body when null. */
  param?: string | null;
  /** The answer's X-Request-Id. */
  requestId: string;
};

/**
 * The error body. A 400 with more than one problem also lists them all in `errors` (the first is the
 * one `error` says); with one problem the body stays the specification's documented `{ error }`.
 * Both shapes add the catalogued `code`, the `param` at fault when there is one, and the `requestId`.
 */
export function errorResponseBody(status: number, message: string, shape: unknown, details: ErrorDetails, problems?: readonly Problem[]) {
  const base = shape === 'numbered' ? { error: status, message } : { error: message };
  const withDetails = { ...base, code: details.code, ...(details.param ? { param: details.param } : {}), requestId: details.requestId };
  return status === 400 && problems && problems.length > 1 ? { ...withDetails, errors: problems } : withDetails;
}

/** The request id of an answer: the X-Request-Id header the requestId middleware set on it. */
export const requestIdOf = (response: Pick<ServerResponse, 'getHeader'>): string => String(response.getHeader(REQUEST_ID_HEADER) ?? '');

/** A body parser's refusal as the catalogue names it. */
function bodyParserCodeOf(error: { status: number }): ErrorCode {
  if (error.status === 413) return 'body_too_large';
  if (error.status === 415) return 'unsupported_media_type';
  return 'body_malformed';
}

/** An error Express's router raised with a client-error status (its only kind: a malformed path). */
function isClientErrorOfTheRouter(error: unknown): error is Error & { status: number } {
  const status = (error as { status?: unknown } | null)?.status;
  return error instanceof Error && typeof status === 'number' && status >= 400 && status < 500;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, next) => {
    if (response.headersSent) return next(error);
    let status = 500;
    let message = 'Internal server error';
    let code: ErrorCode = 'internal_error';
    let param: string | null = null;
    if (error instanceof AppError) {
      status = error.status;
      message = error.message;
      code = error.code;
      param = error.param;
    } else if (isBodyParserError(error)) {
      status = error.status;
      code = bodyParserCodeOf(error);
      message =
        error.type === 'entity.too.large'
          ? 'Request body is too large'
          : error.type === 'entity.parse.failed'
            ? 'Request body is not valid JSON'
            : error.type === 'entity.encoding.invalid'
              ? error.message
              : `Request body could not be read: ${error.message}`;
    } else if (isClientErrorOfTheRouter(error)) {
      // The router's own refusals, such as a path parameter whose percent-encoding is not UTF-8
      // (a URIError with status 400): the client's to fix, so never a 500.
      status = error.status;
      code = defaultErrorCodeOf(status);
      message =
        error instanceof URIError ? 'The path is malformed: a percent-encoded part is not valid UTF-8' : 'The request could not be read';
    } else if (isDatabaseUnavailable(error)) {
      status = 503;
      message = 'The database is unavailable; retry later';
      code = 'service_unavailable';
    }
    if (status >= 500) logger.error({ err: error }, 'request failed');
    // A 503 is temporary by definition: say when to come back, as the gateway's own 503s do.
    if (status === 503)
      response.setHeader('Retry-After', String((error instanceof AppError && error.retryAfterSeconds) || RETRY_AFTER_UNAVAILABLE_SECONDS));
    // A 429 that knows when a place frees up says so too (heavy operations), and so does a 409 of a
    // request still running (an Idempotency-Key in use).
    else if ((status === 429 || status === 409) && error instanceof AppError && error.retryAfterSeconds)
      response.setHeader('Retry-After', String(error.retryAfterSeconds));
    // Never a stack trace in a response: the message is the whole story for the client.
    // Decided by the operation (NUMBERED_ERROR_OPERATIONS, the one list the document reads too), not
    // the route handler, so errors raised before it (bad JSON) match; the gateway, whose paths carry
    // /api/v1, marks the operation in errorShape.
    const numbered = response.locals.errorShape === 'numbered' || NUMBERED_ERROR_OPERATIONS.includes(`${request.method} ${request.path}`);
    const details = { code, param, requestId: requestIdOf(response) };
    response
      .status(status)
      .json(
        errorResponseBody(
          status,
          message,
          numbered ? 'numbered' : 'plain',
          details,
          error instanceof InvalidRequest ? error.problems : undefined,
        ),
      );
  };
}

function isBodyParserError(error: unknown): error is { status: number; type: string; message: string } {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { type?: unknown }).type === 'string' &&
    typeof (error as { status?: unknown }).status === 'number' &&
    (error as { status: number }).status < 500
  );
}

/** The affiliate portal's single-use link (`/portal/open/<token>`) as it may be logged: the token is a credential for 10 minutes. */
export function maskedUrl(url: string): string {
  return url.replace(/(\/portal\/open\/)[^?#]*/i, '$1[redacted]');
}

/** One access-log line per request, under the request id; probes and scrapes are not logged. Credentials are redacted (createLogger) or masked. */
export function httpLogging(logger: Logger): RequestHandler {
  // pino-http writes its one line per request at info, but builds each request's child logger (the
  // request serialized and redacted) before it knows: with info off (LOG_LEVEL=warn) that is all
  // cost and no line, on every request.
  if (!logger.isLevelEnabled('info')) return (_request, _response, next) => next();
  return pinoHttp({
    logger,
    genReqId: (_request, response) => String(response.locals.requestId),
    autoLogging: { ignore: (request) => request.url === '/metrics' || request.url === '/healthz' },
    serializers: {
      req: (request: { url?: unknown }) => {
        if (typeof request.url === 'string') request.url = maskedUrl(request.url);
        return request;
      },
    },
  });
}

/**
 * The JSON parser would quietly turn invalid bytes into U+FFFD and store them, strip a byte-order mark
 * and decode any `utf-*` charset; refuse all three instead, by the reading the gateway judges scopes
 * with (jsonTextOf), so the two never disagree on what a body says.
 */
function rejectUnreadableJson(_request: unknown, _response: unknown, body: Buffer, encoding: string | null): void {
  jsonTextOf(body, encoding ?? undefined);
}

const metricsHandler =
  (metrics: Metrics): RequestHandler =>
  async (_request, response) => {
    response.setHeader('content-type', metrics.registry.contentType);
    response.send(await metrics.registry.metrics());
  };

/** A metrics listener: /metrics alone, on a port of its own that only the monitoring namespace may reach. */
export function createMetricsApp(metrics: Metrics): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsHandler(metrics));
  return app;
}

/**
 * Every router of the platform matches paths in their exact case. The gateway judges scopes, `no-store`
 * and the audit record by an operation's path (SECURITY.md); a case-insensitive router (Express's
 * default) would serve `/payouts/Export` as the export the gateway did not recognise.
 */
export const createRouter = (): Router => Router({ caseSensitive: true });

/** The express app every service uses: same middleware, probes and error mapping everywhere. */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('case sensitive routing', true);
  app.set('query parser', 'simple');
  app.use(requestId);
  app.use(httpLogging(options.logger));
  app.use(options.metrics.middleware);

  app.get('/healthz', (_request, response) => {
    response.json({ status: 'ok' });
  });
  app.get('/readyz', async (_request, response) => {
    const checks = await options.readiness();
    const ready = Object.values(checks).every(Boolean);
    response.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  if (options.serveMetrics !== false) app.get('/metrics', metricsHandler(options.metrics));

  app.use(requireInternalCaller(options.internalToken));
  if (options.shedding) app.use(options.shedding);
  // Probes and scrapes above are never queued: a busy service still says it is alive.
  app.use(
    admissionControl(options.admission ?? DEFAULT_ADMISSION, options.logger, options.name, options.metrics.admission, options.metrics.shed),
  );
  // Internal endpoints are called by our own code only; the Stripe webhook among them takes opaque bytes.
  app.use((request, response, next) => (request.path.startsWith('/internal/') ? next() : requireJsonBody(request, response, next)));
  app.use(express.json({ limit: options.bodyLimit ?? '1mb', verify: rejectUnreadableJson }));
  app.use(options.routes);
  app.use((request, _response, next) =>
    next(new AppError(404, `No route for ${request.method} ${request.path}`, { code: 'route_missing' })),
  );
  app.use(errorHandler(options.logger));
  return app;
}
