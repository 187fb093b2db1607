import type { StoreContext } from '@affiliate/platform';
import { SaleRepository } from './sales';

export type SaleRepositories = { sales: SaleRepository };

export function createRepositories(context: StoreContext): SaleRepositories {
  return { sales: new SaleRepository(context) };
}
