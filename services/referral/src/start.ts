import { runService } from '@affiliate/platform';
import { buildReferralService } from './service';

runService({ name: 'referral', config: {}, build: (context) => buildReferralService(context) });
