import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';

/**
 * Tracing for one process, from the standard OTEL_* variables. It must run before express,
 * mongoose, the mongodb driver and node:http are first required, because the instrumentations
 * patch those modules as they load: every component's start.ts imports this module first, so
 * `npm start`, the system tests, the image and the manifests (all `node <component>/dist/start.js`)
 * get it the same way.
 *
 * Propagation is always on: context, the W3C `traceparent` propagator and the instrumentations are
 * registered even when nothing exports, so a caller's trace reaches the webhook attempt and its
 * delivery record either way. Without an exporter, a request that arrives without a sampled
 * `traceparent` gets non-recording spans (ids only, nothing kept); nothing is ever exported.
 * `OTEL_SDK_DISABLED=true` turns all of it off, propagation included.
 */
export type TelemetrySettings = {
  serviceName: string;
  exporter: 'none' | 'otlp' | 'console';
  protocol: 'http/protobuf' | 'http/json';
  sampler: Sampler;
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

function samplerFrom(env: NodeJS.ProcessEnv, exporting: boolean): Sampler {
  // Nothing exports: start no recording of our own, but keep a caller's sampling decision, so the
  // flags it sent travel on unchanged.
  if (!exporting) return new ParentBasedSampler({ root: new AlwaysOffSampler() });
  const name = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim();
  const argument = env.OTEL_TRACES_SAMPLER_ARG === undefined || env.OTEL_TRACES_SAMPLER_ARG === '' ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG);
  if (name.endsWith('traceidratio') && !(argument >= 0 && argument <= 1)) {
    throw new TelemetrySettingError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 for ${name}, not "${env.OTEL_TRACES_SAMPLER_ARG}"`);
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
  return make();
}

/** What the environment asks for; an exporter only when OTEL_TRACES_EXPORTER names one or an OTLP endpoint is set. */
export function telemetrySettingsFrom(env: NodeJS.ProcessEnv, entry = require.main?.filename): TelemetrySettings {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const named = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((value) => value.trim()).filter(Boolean);
  const requested = named.length > 0 ? named : [endpoint ? 'otlp' : 'none'];
  if (requested.length > 1 || !['none', 'otlp', 'console'].includes(requested[0] as string)) {
    throw new TelemetrySettingError(`OTEL_TRACES_EXPORTER must be one of otlp, console, none, not "${env.OTEL_TRACES_EXPORTER}"`);
  }
  const exporter = requested[0] as TelemetrySettings['exporter'];
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (exporter === 'otlp' && protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new TelemetrySettingError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not included), not "${protocol}"`);
  }
  return {
    serviceName: env.OTEL_SERVICE_NAME || componentName(entry),
    exporter,
    protocol: protocol as TelemetrySettings['protocol'],
    sampler: samplerFrom(env, exporter !== 'none'),
  };
}

function exporterOf(settings: TelemetrySettings): SpanExporter | undefined {
  if (settings.exporter === 'console') return new ConsoleSpanExporter();
  if (settings.exporter === 'none') return undefined;
  // Both read the OTLP endpoint, headers, timeout and compression from the OTEL_EXPORTER_OTLP_* variables.
  /* eslint-disable @typescript-eslint/no-require-imports -- only the chosen encoding is loaded */
  const { OTLPTraceExporter } = (
    settings.protocol === 'http/json' ? require('@opentelemetry/exporter-trace-otlp-http') : require('@opentelemetry/exporter-trace-otlp-proto')
  ) as typeof import('@opentelemetry/exporter-trace-otlp-proto');
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

/** Registers context, propagation, the instrumentations and (when configured) the exporter, once per process. */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): Telemetry | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const settings = telemetrySettingsFrom(env);
  const exporter = exporterOf(settings);
  const resource = resourceFromAttributes({ 'service.name': settings.serviceName }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    sampler: settings.sampler,
    spanProcessors: exporter
      ? [
          new BatchSpanProcessor({
            exporter,
            scheduledDelayMillis: positive(env, 'OTEL_BSP_SCHEDULE_DELAY'),
            maxQueueSize: positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
            maxExportBatchSize: positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
            exportTimeoutMillis: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
          }),
        ]
      : [],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0] as string) }),
      new ExpressInstrumentation(),
      // The services call each other with fetch (undici), which node:http's instrumentation does not see.
      new UndiciInstrumentation(),
      // Database calls inside a request or a message only: the relay's and the scheduler's timed sweeps would each be a trace of their own.
      new MongoDBInstrumentation({ requireParentSpan: true }),
    ],
  });
  return { settings, shutdown: () => provider.shutdown() };
}
