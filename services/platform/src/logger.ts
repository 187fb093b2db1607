import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type Logger } from 'pino';

export type { Logger };

type RequestContext = { requestId: string; programId?: string };

const requestContext = new AsyncLocalStorage<RequestContext>();

/** Runs `work` with a request id (and program) that every log line inside it carries. */
export function withRequestContext<T>(context: RequestContext, work: () => T): T {
  return requestContext.run(context, work);
}

export function currentRequestContext(): RequestContext | undefined {
  return requestContext.getStore();
}

export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    // The mixin reads the context of whatever request or message is being handled right now. The
    // trace's ids (trace_id, span_id, trace_flags) come from OpenTelemetry's pino instrumentation
    // (services/platform/src/telemetry), which adds its own mixin to this one.
    mixin: () => {
      const context = requestContext.getStore();
      return context ? { requestId: context.requestId, programId: context.programId } : {};
    },
    // Credentials never reach a log line: API keys, the internal token, the affiliate portal's session
    // cookie (12 hours) both ways, and its CSRF token; the portal's link token is masked in the logged
    // URL (httpLogging). No request body is logged; should one ever be, a console member's password
    // and TOTP code are censored there too.
    redact: {
      paths: [
        'req.body.password',
        'req.body.totpCode',
        'req.headers.authorization',
        'req.headers["x-internal-token"]',
        'req.headers.cookie',
        'req.headers["x-csrf-token"]',
        'res.headers["set-cookie"]',
      ],
      censor: '[redacted]',
    },
  });
}
