// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry/without-route-spans';
import { ConfigError, createLogger, stopOnSignals } from '@affiliate/platform';
import { gatewaySettingsFromEnv, type GatewaySettings } from './config';
import { bootGateway } from './gateway';

let settings: GatewaySettings;
try {
  settings = gatewaySettingsFromEnv();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(78); // EX_CONFIG, as loadConfig does for the services
}

bootGateway(settings).then(
  (gateway) => stopOnSignals(gateway, gateway.logger, undefined, settings.shutdownDelayMs),
  (error: unknown) => {
    createLogger('gateway').fatal({ err: error }, 'gateway could not start');
    process.stderr.write(`gateway could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
