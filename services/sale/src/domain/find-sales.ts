import type { Sale } from '@affiliate/contracts';
import { csvText, fromMinorUnits, minorUnitDigits, notFound, type CsvRow, type PageRequest } from '@affiliate/platform';
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

const money = (minor: number, currency: string) => fromMinorUnits(minor, currency).toFixed(minorUnitDigits(currency));

/** The filtered sales as CSV rows, newest first; what integrators sent (code, external ids) guarded against formulas. */
export async function* saleCsvRows(repositories: SaleRepositories, programId: string, filters: SaleFilters): AsyncGenerator<CsvRow> {
  for await (const sale of repositories.sales.exportRows(programId, filters)) {
    const commissionCurrency = sale.commissions[0]?.currency ?? sale.currency;
    yield [
      sale._id,
      sale.affiliateId,
      sale.referralId ?? '',
      csvText(sale.promoCode),
      csvText(sale.externalId),
      csvText(sale.customerId),
      money(sale.totalEarnedMinor, sale.currency),
      sale.currency,
      money(sale.commissionEarnedMinor, commissionCurrency),
      commissionCurrency,
      csvText(sale.paymentTrigger),
      (sale.paidAt ?? sale.createdAt).toISOString(),
      sale.createdAt.toISOString(),
    ];
  }
}
