/**
 * The gateway's tracing, imported first by its start.ts: the same as every service's, without a span
 * per express middleware and route (setup.ts, `routeSpans`). Its server span and the `traceparent` it
 * sends upstream come from the http instrumentation, as before.
 */
import { startTelemetryOrExit } from './start';

startTelemetryOrExit({ routeSpans: false });
