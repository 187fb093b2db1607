import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AmqplibInstrumentation } from '@opentelemetry/instrumentation-amqplib';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NoopSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { arrivesUntraced, callsUntraced, startTracesHere } from '../tracing';

/**
 * Tracing for one process: OpenTelemetry's NodeSDK (`@opentelemetry/sdk-node`) with the http,
 * undici (fetch), express, amqplib, mongodb and pino instrumentations, configured by the standard
 * OTEL_* variables. It must run before express, mongoose, the mongodb driver, amqplib, pino and
 * node:http are first required, because the instrumentations patch those modules as they load: every component's start.ts imports this module first, so
 * `npm start`, the system tests, the image and the manifests (all `node <component>/dist/start.js`)
 * get it the same way.
 *
 * Propagation is always on: context, the W3C `traceparent` propagator and the instrumentations are
 * registered even when nothing exports, so a caller's trace reaches the webhook attempt and its
 * delivery record either way. Where no trace started here could be recorded (no exporter, or a
 * sampler that samples no root), a trace is continued but never started: a request with a
 * `traceparent` gets spans of its own that carry it on, and a request without one runs untraced,
 * past the instrumentations' span making (tracing.ts, `startTracesHere`).
 * `OTEL_SDK_DISABLED=true` turns all of it off, propagation included.
 */
export type TelemetrySettings = {
  serviceName: string;
  exporter: 'none' | 'otlp' | 'console';
  protocol: 'http/protobuf' | 'http/json' | 'grpc';
  sampler: Sampler;
  /**
   * Whether a trace can start in this process: only when a trace started here could be recorded (an
   * exporter, and a sampler that samples some roots). Otherwise work that arrives without a trace runs
   * untraced, and a trace that arrives is continued (tracing.ts, `startTracesHere`).
   */
  startsTraces: boolean;
};

/** An unusable OTEL_* value: named, and the process stops as for any other bad setting. */
export class TelemetrySettingError extends Error {}

/** The component's name from its package (`@affiliate/sale-service` → `sale`), unless OTEL_SERVICE_NAME says otherwise. */
function componentName(entry: string | undefined): string {
  let directory = entry ? dirname(entry) : process.cwd();
  for (let depth = 0; depth < 4; depth += 1) {
    try {
      const name = (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { name?: string }).name;
      if (name) return name.replace(/^@affiliate\//, '').replace(/-service$/, '');
    } catch {
      // no package.json here: look one directory up
    }
    directory = dirname(directory);
  }
  return 'affiliate-platform';
}

/** Samplers that never record a root span: a trace started under them would be ids nobody can look up. */
const ROOTS_NEVER_SAMPLED = new Set(['always_off', 'parentbased_always_off']);

function samplingFrom(env: NodeJS.ProcessEnv, exporting: boolean): Pick<TelemetrySettings, 'sampler' | 'startsTraces'> {
  // Nothing exports: start no recording of our own, but keep a caller's sampling decision, so the
  // flags it sent travel on unchanged.
  if (!exporting) return { sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), startsTraces: false };
  const name = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim();
  const argument =
    env.OTEL_TRACES_SAMPLER_ARG === undefined || env.OTEL_TRACES_SAMPLER_ARG === '' ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG);
  if (name.endsWith('traceidratio') && !(argument >= 0 && argument <= 1)) {
    throw new TelemetrySettingError(
      `OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 for ${name}, not "${env.OTEL_TRACES_SAMPLER_ARG}"`,
    );
  }
  const samplers: Record<string, () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: () => new TraceIdRatioBasedSampler(argument),
    parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    parentbased_traceidratio: () => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(argument) }),
  };
  const make = samplers[name];
  if (!make) throw new TelemetrySettingError(`OTEL_TRACES_SAMPLER must be one of ${Object.keys(samplers).join(', ')}, not "${name}"`);
  return { sampler: make(), startsTraces: !ROOTS_NEVER_SAMPLED.has(name) && !(name.endsWith('traceidratio') && argument === 0) };
}

/** What the environment asks for; an exporter only when OTEL_TRACES_EXPORTER names one or an OTLP endpoint is set. */
export function telemetrySettingsFrom(env: NodeJS.ProcessEnv, entry = require.main?.filename): TelemetrySettings {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const named = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);
  const requested = named.length > 0 ? named : [endpoint ? 'otlp' : 'none'];
  if (requested.length > 1 || !['none', 'otlp', 'console'].includes(requested[0] as string)) {
    throw new TelemetrySettingError(`OTEL_TRACES_EXPORTER must be one of otlp, console, none, not "${env.OTEL_TRACES_EXPORTER}"`);
  }
  const exporter = requested[0] as TelemetrySettings['exporter'];
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (exporter === 'otlp' && !['http/protobuf', 'http/json', 'grpc'].includes(protocol)) {
    throw new TelemetrySettingError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf, http/json or grpc, not "${protocol}"`);
  }
  return {
    serviceName: env.OTEL_SERVICE_NAME || componentName(entry),
    exporter,
    protocol: protocol as TelemetrySettings['protocol'],
    ...samplingFrom(env, exporter !== 'none'),
  };
}

function exporterOf(settings: TelemetrySettings): SpanExporter | undefined {
  if (settings.exporter === 'console') return new ConsoleSpanExporter();
  if (settings.exporter === 'none') return undefined;
  // Both read the OTLP endpoint, headers, timeout and compression from the OTEL_EXPORTER_OTLP_* variables.
  /* eslint-disable @typescript-eslint/no-require-imports -- only the chosen encoding is loaded */
  const modules = {
    'http/json': () => require('@opentelemetry/exporter-trace-otlp-http'),
    'http/protobuf': () => require('@opentelemetry/exporter-trace-otlp-proto'),
    grpc: () => require('@opentelemetry/exporter-trace-otlp-grpc'),
  };
  const { OTLPTraceExporter } = modules[settings.protocol]() as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return new OTLPTraceExporter();
}

const positive = (env: NodeJS.ProcessEnv, name: string): number | undefined => {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0) throw new TelemetrySettingError(`${name} must be a positive whole number, not "${value}"`);
  return number;
};

/** Probes and scrapes would be a trace each, every few seconds, and say nothing about a request. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export type Telemetry = { settings: TelemetrySettings; shutdown: () => Promise<void> };

/**
 * What the spans go to. Without an exporter a processor that drops every span still makes the SDK
 * register its tracer provider (NodeSDK registers none without a processor): spans then get ids of
 * their own, so each hop names its real parent in `traceparent` and log lines name their span, and
 * nothing is kept or sent. (NodeSDK's own default, an OTLP exporter to localhost whenever
 * OTEL_TRACES_EXPORTER is unset, would export when nothing was configured.)
 */
function spanProcessorsOf(settings: TelemetrySettings, env: NodeJS.ProcessEnv): SpanProcessor[] {
  const exporter = exporterOf(settings);
  if (!exporter) return [new NoopSpanProcessor()];
  return [
    new BatchSpanProcessor({
      exporter,
      scheduledDelayMillis: positive(env, 'OTEL_BSP_SCHEDULE_DELAY'),
      maxQueueSize: positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
      maxExportBatchSize: positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
      exportTimeoutMillis: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
    }),
  ];
}

/**
 * What a component traces beyond its HTTP, database and broker calls. `routeSpans: false` leaves out
 * express's instrumentation, which makes a span for every middleware and route a request passes: the
 * gateway's choice, where a request passes a dozen of its own middlewares on the way to the proxy:
 * without those spans it served 15 % more GETs by id in one bench run (issue 29, `--candidate-gateway`),
 * and they said nothing its server span and the services' own spans do not. Its server span then
 * carries no `http.route` and is named by the method alone (the express instrumentation set both).
 */
export type TelemetryOptions = { routeSpans?: boolean };

/** Starts the NodeSDK (context, propagation, the instrumentations and, when configured, the exporter), once per process. */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env, options: TelemetryOptions = {}): Telemetry | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const settings = telemetrySettingsFrom(env);
  const sdk = new NodeSDK({
    serviceName: settings.serviceName,
    sampler: settings.sampler,
    spanProcessors: spanProcessorsOf(settings, env),
    // Traces only: metrics are prom-client's on the metrics listener, logs are pino's on stdout.
    // Empty lists, because NodeSDK would otherwise start OTLP metric and log exporters by default.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) =>
          UNTRACED_PATHS.has((request.url ?? '').split('?')[0] as string) || arrivesUntraced(request.headers),
        ignoreOutgoingRequestHook: callsUntraced,
      }),
      ...(options.routeSpans === false ? [] : [new ExpressInstrumentation()]),
      // The services call each other with fetch (undici), which node:http's instrumentation does not see.
      new UndiciInstrumentation({ ignoreRequestHook: callsUntraced }),
      // Database calls inside a request or a message only: the relay's and the scheduler's timed sweeps would each be a trace of their own.
      new MongoDBInstrumentation({ requireParentSpan: true }),
      // Producer spans on publish (traceparent into the message headers), consumer spans on
      // delivery (continuing the headers' trace) that end at ack, nack or reject.
      new AmqplibInstrumentation(),
      // trace_id, span_id and trace_flags on every log line written inside a span; the lines stay
      // on stdout only (no OTLP log export).
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  startTracesHere(settings.startsTraces);
  sdk.start();
  return { settings, shutdown: () => sdk.shutdown() };
}
