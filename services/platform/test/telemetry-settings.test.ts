import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { telemetrySettingsFrom } from '../src/telemetry/setup';

/**
 * Which exporter the standard OTEL_* variables choose (services/platform/src/telemetry). What is
 * propagated and exported across the processes is proved by system-tests/test/tracing.test.ts.
 */
const entry = join(__dirname, '../../sale/dist/start.js');

test('with no OTEL variable nothing is exported, and the component is named after its package', () => {
  const settings = telemetrySettingsFrom({}, entry);
  expect({ exporter: settings.exporter, serviceName: settings.serviceName }).toEqual({ exporter: 'none', serviceName: 'sale' });
});

test('an OTLP endpoint turns export on, over http/protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL says http/json', () => {
  expect(telemetrySettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, entry)).toMatchObject({
    exporter: 'otlp',
    protocol: 'http/protobuf',
  });
  expect(
    telemetrySettingsFrom(
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      entry,
    ),
  ).toMatchObject({ exporter: 'otlp', protocol: 'http/json' });
  // OTEL_TRACES_EXPORTER wins over an endpoint, as the specification says.
  expect(
    telemetrySettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, entry),
  ).toMatchObject({ exporter: 'none' });
});

test('an unusable OTEL_* value stops the component at start with the variable named (exit 78, not restarted by npm start)', () => {
  const started = spawnSync(process.execPath, [join(__dirname, '../../coupon/dist/start.js')], {
    env: { PATH: process.env.PATH, OTEL_TRACES_EXPORTER: 'zipkin' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect({ status: started.status, stderr: started.stderr }).toEqual({
    status: 78,
    stderr: expect.stringContaining('OTEL_TRACES_EXPORTER must be one of otlp, console, none, not "zipkin"'),
  });
});

test('OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports over gRPC (a collector on 4317)', () => {
  expect(
    telemetrySettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, entry),
  ).toMatchObject({ exporter: 'otlp', protocol: 'grpc' });
});

test('a trace starts here only where it could be recorded: with an exporter and a sampler that samples some roots', () => {
  const exporting = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
  const startsTraces = (env: NodeJS.ProcessEnv) => telemetrySettingsFrom(env, entry).startsTraces;
  expect({
    none: startsTraces({}),
    exported: startsTraces(exporting),
    ratio: startsTraces({ ...exporting, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }),
    ratioZero: startsTraces({ ...exporting, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }),
    parentOnly: startsTraces({ ...exporting, OTEL_TRACES_SAMPLER: 'parentbased_always_off' }),
    off: startsTraces({ ...exporting, OTEL_TRACES_SAMPLER: 'always_off' }),
  }).toEqual({ none: false, exported: true, ratio: true, ratioZero: false, parentOnly: false, off: false });
});
