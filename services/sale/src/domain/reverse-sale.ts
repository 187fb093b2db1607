import { randomUUID } from 'node:crypto';
import { notFound } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import { stateOf, type CommissionEntry, type SaleDocument } from '../data-access/sales';
import { saleDeleted } from './sale-events';

/**
 * What a reversal does to a commission: one not yet in a payout is void; one already in a payout (or
 * paid) stays as it is, and an adjustment of the opposite amount, due at once, is deducted from the
 * affiliate's next payout.
 */
function reversed(commission: CommissionEntry, now: Date): CommissionEntry[] {
  if (commission.adjusts || stateOf(commission) === 'VOID') return [commission];
  if (!commission.payoutCreated) return [{ ...commission, state: 'VOID' }];
  const adjustment: CommissionEntry = {
    id: randomUUID(),
    affiliateId: commission.affiliateId,
    amountMinor: -commission.amountMinor,
    currency: commission.currency,
    state: 'OPEN',
    availableAt: now,
    commissionPlanId: commission.commissionPlanId ?? null,
    adjusts: commission.id,
    payoutCreated: false,
    payoutId: null,
  };
  return [commission, adjustment];
}

/**
 * DELETE /sales reverses a sale (a refund, a dispute): it leaves every read and sale.deleted goes
 * out in the same write, with its commissions voided or taken back. The record stays, so its
 * externalId can never be recorded again, and the redemption counters are not decremented, as in Stripe.
 */
export async function reverseSale(repositories: SaleRepositories, programId: string, saleId: string): Promise<{ id: string; deleted: true }> {
  const now = new Date();
  const done = await repositories.sales.change(programId, saleId, (current) => ({
    set: { reversedAt: now, updatedAt: now, commissions: current.commissions.flatMap((commission) => reversed(commission, now)) } as Partial<SaleDocument>,
    events: (next) => [saleDeleted(next)],
  }));
  if (!done) throw notFound(`No sale with id ${saleId} in this program`);
  return { id: saleId, deleted: true };
}
