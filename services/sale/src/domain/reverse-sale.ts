import { notFound } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import type { SaleDocument } from '../data-access/sales';
import { saleDeleted } from './sale-events';

/**
 * DELETE /sales reverses a sale (a refund, a dispute): it leaves every read and sale.deleted goes
 * out in the same write. The record stays, so its externalId can never be recorded again, and the
 * redemption counters are not decremented, as in Stripe.
 */
export async function reverseSale(repositories: SaleRepositories, programId: string, saleId: string): Promise<{ id: string; deleted: true }> {
  const now = new Date();
  const reversed = await repositories.sales.change(programId, saleId, () => ({
    set: { reversedAt: now, updatedAt: now } as Partial<SaleDocument>,
    events: (next) => [saleDeleted(next)],
  }));
  if (!reversed) throw notFound(`No sale with id ${saleId} in this program`);
  return { id: saleId, deleted: true };
}
