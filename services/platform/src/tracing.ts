import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';

/**
 * The platform's own spans and trace hand-overs, through the OpenTelemetry API only: with no SDK
 * registered (telemetry off, or a test that runs a service in its own process) every call here is a
 * no-op, and with it registered (services/platform/src/telemetry) they join the instrumented spans.
 */
export const tracer = trace.getTracer('@affiliate/platform');

/**
 * Whether work that arrives outside any trace (a request with no `traceparent`, an event stored
 * outside one) starts a trace here. The telemetry setup says no when no trace started here could be
 * recorded (no exporter, or a sampler that samples no root): such a trace would be ids that nobody
 * can look up, and making them is not free. The http instrumentation
 * alone cost the coupon service 40 % of the GETs by id it served (bench/README.md, "Tracing where
 * nothing records it"). A trace that arrives is continued either way. Without the SDK every call is
 * a no-op, so the default does not matter there.
 */
let tracesStartHere = true;

/** Called once by the telemetry setup (`TelemetrySettings.startsTraces`). */
export function startTracesHere(starts: boolean): void {
  tracesStartHere = starts;
}

/** No trace, and none started under it: spans made in it are invalid and nothing is propagated. */
const UNTRACED = suppressTracing(ROOT_CONTEXT);

/**
 * Whether work that arrived with these headers runs untraced: it carries no valid trace (none, or a
 * `traceparent` that cannot be read), and none starts here.
 */
export function arrivesUntraced(headers: Record<string, unknown> | undefined | null): boolean {
  return !tracesStartHere && contextOf(headers) === UNTRACED;
}

/** Whether an outgoing call made now runs untraced: there is no trace to continue, and none starts here. */
export function callsUntraced(): boolean {
  return !tracesStartHere && activeSpanIds() === undefined;
}

/** A W3C trace-context carrier (`traceparent`, `tracestate`): what is stored with work done later. */
export type TraceCarrier = Record<string, string>;

/** The active trace as a carrier to store, or undefined when there is none. */
export function currentTraceCarrier(active: Context = context.active()): TraceCarrier | undefined {
  const carrier: TraceCarrier = {};
  propagation.inject(active, carrier);
  return carrier.traceparent ? carrier : undefined;
}

/**
 * The context a stored or received carrier names: the root context when it names none, or no trace
 * at all when none starts here (an event stored outside any trace is then published and delivered
 * without one).
 */
export function contextOf(carrier: Record<string, unknown> | undefined | null): Context {
  // Most work carries none: no parsing for it.
  if (carrier?.traceparent === undefined) return tracesStartHere ? ROOT_CONTEXT : UNTRACED;
  const extracted = extractedFrom(carrier);
  // A `traceparent` that cannot be read names no trace.
  return tracesStartHere || trace.getSpanContext(extracted) !== undefined ? extracted : UNTRACED;
}

/** The trace a carrier names, over the root context (the root context itself when it names none). */
function extractedFrom(carrier: Record<string, unknown>): Context {
  const strings: TraceCarrier = {};
  for (const [key, value] of Object.entries(carrier)) {
    // AMQP header tables may hand strings over as Buffers.
    if (typeof value === 'string') strings[key] = value;
    else if (Buffer.isBuffer(value)) strings[key] = value.toString('utf8');
  }
  return propagation.extract(ROOT_CONTEXT, strings);
}

/**
 * The context a received message is handled in: the consumer span the amqplib instrumentation made
 * (`active`), unless the message carried no trace and none starts here.
 */
export function handlingContextOf(headers: Record<string, unknown> | undefined, active: Context = context.active()): Context {
  return arrivesUntraced(headers) ? UNTRACED : active;
}

/**
 * Runs `work` in no trace, and starts none, wherever spans go: for a process's own chatter (the
 * dispatcher's backlog news, every second), which would otherwise be a trace of its own each time.
 */
export function neverTraced<T>(work: () => T): T {
  return context.with(UNTRACED, work);
}

/**
 * Runs `work` outside any trace: for a queue's worker, which otherwise runs in the context of
 * whichever request or message last started it and would file its database calls under that trace.
 */
export function outsideAnyTrace<T>(work: () => T): T {
  // Where no trace starts, not even one of its own (a publish would start one).
  return context.with(tracesStartHere ? ROOT_CONTEXT : UNTRACED, work);
}

/** The trace and span ids of the active span, when it has valid ones (recording or not). */
export function activeSpanIds(): { traceId: string; spanId: string; traceFlags: number } | undefined {
  const span = trace.getSpan(context.active());
  const ids = span?.spanContext();
  return ids && trace.isSpanContextValid(ids) ? { traceId: ids.traceId, spanId: ids.spanId, traceFlags: ids.traceFlags } : undefined;
}

/** A span's trace id, or null for the invalid span of an unregistered SDK. */
export function traceIdOf(span: Span): string | null {
  const ids = span.spanContext();
  return trace.isSpanContextValid(ids) ? ids.traceId : null;
}

/**
 * Runs `work` in a new active span under `parent`, ending it when the work settles; a thrown error
 * marks the span failed and is thrown on.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; parent?: Context; attributes?: Record<string, string | number | boolean> },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        markSpanFailed(error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Marks the active span failed (the work goes on: a retry, a 503) with the error's message. */
export function markSpanFailed(error: unknown): void {
  const span = trace.getSpan(context.active());
  if (!span) return;
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** Sends the spans still buffered (a stopping process), waiting at most `timeoutMs`. */
export async function flushTraces(timeoutMs = 2000): Promise<void> {
  const provider = trace.getTracerProvider() as { getDelegate?: () => unknown };
  const delegate = (provider.getDelegate?.() ?? provider) as { forceFlush?: () => Promise<void> };
  if (typeof delegate.forceFlush !== 'function') return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([delegate.forceFlush().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

export { SpanKind, SpanStatusCode, type Span };
