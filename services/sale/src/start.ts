import { runService } from '@affiliate/platform';
import { buildSaleService } from './service';

runService({ name: 'sale', config: {}, build: (context) => buildSaleService(context) });
