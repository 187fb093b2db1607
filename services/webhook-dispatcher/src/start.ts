// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry';
import { runService } from '@affiliate/platform';
import { dispatcherConfigShape, dispatcherSettings } from './config';
import { buildWebhookDispatcherService } from './service';

runService({
  name: 'webhook-dispatcher',
  config: dispatcherConfigShape,
  build: (context, config) => buildWebhookDispatcherService(context, dispatcherSettings(config)),
});
