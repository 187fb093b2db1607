import { notFound } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import type { SaleDocument } from '../data-access/sales';
import { reverse } from './commission';
import { saleDeleted } from './sale-events';

/**
 * DELETE /sales reverses a sale (a refund, a dispute): it leaves every read and sale.deleted goes
 * out in the same write, with its commissions voided or taken back. The record stays, so its
 * externalId can never be recorded again, and the redemption counters are not decremented, as in Stripe.
 */
export async function reverseSale(
  repositories: SaleRepositories,
  programId: string,
  saleId: string,
): Promise<{ id: string; deleted: true }> {
  const now = new Date();
  const done = await repositories.sales.change(programId, saleId, (current) => ({
    set: {
      reversedAt: now,
      updatedAt: now,
      commissions: current.commissions.flatMap((commission) => reverse(commission, now, current.commissions)),
    } as Partial<SaleDocument>,
    events: (next) => [saleDeleted(next)],
  }));
  if (!done) throw notFound(`No sale with id ${saleId} in this program`);
  return { id: saleId, deleted: true };
}
