import { startTelemetry, TelemetrySettingError, type TelemetryOptions } from './setup';

/**
 * Starts tracing for this process, or stops it on a bad OTEL_* value with the value's name, as any
 * other setting does (EX_CONFIG, which `npm start` does not restart).
 */
export function startTelemetryOrExit(options: TelemetryOptions = {}): void {
  try {
    startTelemetry(process.env, options);
  } catch (error) {
    if (!(error instanceof TelemetrySettingError)) throw error;
    process.stderr.write(`Invalid configuration:\n  ${error.message}\n`);
    process.exit(78);
  }
}
