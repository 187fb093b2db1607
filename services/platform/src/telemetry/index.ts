/**
 * Imported first by every service's start.ts, before anything that loads express, mongoose or
 * node:http (see setup.ts). The gateway imports `./without-route-spans` instead.
 */
import { startTelemetryOrExit } from './start';

startTelemetryOrExit();

export {
  startTelemetry,
  telemetrySettingsFrom,
  TelemetrySettingError,
  type Telemetry,
  type TelemetryOptions,
  type TelemetrySettings,
} from './setup';
