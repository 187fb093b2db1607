import type { Sale } from '@affiliate/contracts';
import { notFound, type PageRequest } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import { toSale, type SaleFilters } from '../data-access/sales';

export async function saleById(repositories: SaleRepositories, programId: string, saleId: string): Promise<Sale> {
  const sale = await repositories.sales.byId(programId, saleId);
  if (!sale) throw notFound(`No sale with id ${saleId} in this program`);
  return toSale(sale);
}

/** Sales matching every filter given (none: the whole program), newest first, one page. */
export async function listSales(
  repositories: SaleRepositories,
  programId: string,
  filters: SaleFilters,
  page: PageRequest,
): Promise<{ items: Sale[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.sales.list(programId, filters, page);
  return { items: items.map((sale) => toSale(sale)), nextCursor };
}
