import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type Logger } from 'pino';
import { activeSpanIds } from './tracing';

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
    // The mixin reads the context of whatever request or message is being handled right now, and
    // its trace (the field names of OpenTelemetry's pino instrumentation, so log tools link them).
    mixin: () => {
      const context = requestContext.getStore();
      const span = activeSpanIds();
      return {
        ...(context ? { requestId: context.requestId, programId: context.programId } : {}),
        ...(span ? { trace_id: span.traceId, span_id: span.spanId, trace_flags: `0${span.traceFlags.toString(16)}` } : {}),
      };
    },
    redact: { paths: ['req.headers.authorization', 'req.headers["x-internal-token"]'], censor: '[redacted]' },
  });
}
