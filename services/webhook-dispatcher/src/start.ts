import { runService } from '@affiliate/platform';
import { buildWebhookDispatcherService } from './service';

runService({ name: 'webhook-dispatcher', config: {}, build: (context) => buildWebhookDispatcherService(context) });
