// First, before anything loads express, mongoose or node:http: tracing patches them as they load.
import '@affiliate/platform/telemetry';
import { runService } from '@affiliate/platform';
import { buildAffiliateService } from './service';

runService({ name: 'affiliate', config: {}, build: (context) => buildAffiliateService(context) });
