/**
 * Imported first by every component's start.ts, before anything that loads express, mongoose or
 * node:http (see setup.ts). A bad OTEL_* value stops the process with its name, as any other
 * setting does (EX_CONFIG, which `npm start` does not restart).
 */
import { startTelemetry, TelemetrySettingError } from './setup';

try {
  startTelemetry();
} catch (error) {
  if (!(error instanceof TelemetrySettingError)) throw error;
  process.stderr.write(`Invalid configuration:\n  ${error.message}\n`);
  process.exit(78);
}

export { startTelemetry, telemetrySettingsFrom, TelemetrySettingError, type Telemetry, type TelemetrySettings } from './setup';
