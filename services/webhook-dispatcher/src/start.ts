// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry';
import { runService } from '@affiliate/platform';
import { DISPATCHER_SECRETS, dispatcherConfigShape, dispatcherSettings } from './config';
import { buildWebhookDispatcherService } from './service';

runService({
  name: 'webhook-dispatcher',
  config: dispatcherConfigShape,
  secrets: [...DISPATCHER_SECRETS],
  build: (context, config) => buildWebhookDispatcherService(context, dispatcherSettings(config)),
});
