import { runService } from '@affiliate/platform';
import { buildAffiliateService } from './service';

runService({ name: 'affiliate', config: {}, build: (context) => buildAffiliateService(context) });
