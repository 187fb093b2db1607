import type { Sale } from '@affiliate/contracts';
import { findPage, notFound, type PageRequest } from '@affiliate/platform';
import type { SaleModels } from '../data-access/models';
import { liveSales, toSale } from '../data-access/sales';

export async function saleById(models: SaleModels, programId: string, saleId: string): Promise<Sale> {
  const sale = await models.sales.findOne({ ...liveSales(programId), _id: saleId }).lean();
  if (!sale) throw notFound(`No sale with id ${saleId} in this program`);
  return toSale(sale);
}

/** Sales matching every filter given (none: the whole program), newest first, one page. */
export async function listSales(
  models: SaleModels,
  programId: string,
  filters: { affiliateId?: string; referralId?: string },
  page: PageRequest,
): Promise<{ items: Sale[]; nextCursor: string | null }> {
  const scope = { ...liveSales(programId), ...definedOnly(filters) };
  const { items, nextCursor } = await findPage(models.sales, scope, page);
  return { items: items.map(toSale), nextCursor };
}

function definedOnly<T extends Record<string, string | undefined>>(filters: T): Partial<T> {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)) as Partial<T>;
}
