import type { Sale, UpdateSaleBody } from '@affiliate/contracts';
import { badRequest, notFound, percentOfMinorUnits, toMinorUnits } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import { toSale, type SaleDocument } from '../data-access/sales';
import { adjust, isRefused, markByHand, stateOf } from './commission';
import { saleUpdated } from './sale-events';

/**
 * PUT /sales: recalculate the commission (a new amount or rate) and/or mark it as rolled into a
 * payout. sale.updated carries the stored state, with payoutCreated and payoutId on the commission.
 *
 * `refund` is a partial refund from the payment provider (Stripe's charge.refunded): a commission
 * already paid out or in a payout is not refused then but keeps what was paid, and the lower amount
 * becomes an adjustment deducted from the next payout (`adjust`). PUT /sales by hand keeps refusing
 * to recalculate a commission in a payout (a 400; reversing the sale takes it back).
 */
export async function updateSale(
  repositories: SaleRepositories,
  programId: string,
  input: UpdateSaleBody,
  options: { refund?: boolean } = {},
): Promise<Sale> {
  const { saleId, totalEarned, commissionRate, payoutId, payoutCreated } = input;
  if ([totalEarned, commissionRate, payoutId, payoutCreated].every((value) => value === undefined)) {
    throw badRequest('Nothing to update: send totalEarned, commissionRate, payoutId or payoutCreated', 'parameter_missing');
  }
  if (payoutCreated === false && typeof payoutId === 'string') {
    throw badRequest(
      'payoutId: a commission with a payoutId is in a payout; send payoutCreated true or leave it out',
      'parameters_inconsistent',
      'payoutId',
    );
  }
  const updated = await repositories.sales.change(programId, saleId, async (current) => {
    const [commission, ...others] = current.commissions;
    if (!commission) throw badRequest(`Sale ${saleId} has no commission to update`, 'status_transition_invalid');
    // A payout run's own payouts are settled by PUT /payouts, never by hand here.
    const inRunPayout =
      stateOf(commission) === 'OPEN' &&
      commission.payoutId !== null &&
      (await repositories.payouts.byId(programId, commission.payoutId)) !== null;
    const inPayout = payoutCreated ?? (payoutId === undefined ? commission.payoutCreated : payoutId !== null);
    const recalculating = totalEarned !== undefined || commissionRate !== undefined;
    const nextTotal = totalEarned === undefined ? current.totalEarnedMinor : toMinorUnits(totalEarned, current.currency);
    // A flat commission does not follow the amount; a rate sent makes it that percentage.
    const nextRate = commissionRate ?? current.commissionRate;
    const commissionEarnedMinor =
      recalculating && nextRate !== null ? percentOfMinorUnits(nextTotal, nextRate) : current.commissionEarnedMinor;
    const now = new Date();
    const sums = { totalEarnedMinor: nextTotal, commissionRate: nextRate, commissionEarnedMinor, updatedAt: now };
    if (options.refund && (stateOf(commission) === 'PAID' || commission.payoutCreated)) {
      const adjusted = adjust(commission, others, commissionEarnedMinor, now);
      if (isRefused(adjusted)) throw badRequest(`The commission of sale ${saleId}: ${adjusted.message}`, 'status_transition_invalid');
      const commissions = [commission, ...others, ...(adjusted.adjustment ? [adjusted.adjustment] : [])];
      return { set: { ...sums, commissions } as Partial<SaleDocument>, events: (next) => [saleUpdated(next)] };
    }
    const marked = markByHand(commission, {
      saleId,
      amountMinor: commissionEarnedMinor,
      recalculating,
      inPayout,
      payoutId: payoutId === undefined ? commission.payoutId : payoutId,
      inRunPayout,
      now,
    });
    if (isRefused(marked)) throw badRequest(marked.message, 'status_transition_invalid');
    const set: Partial<SaleDocument> = { ...sums, commissions: [marked.entry, ...others] };
    return { set, events: (next) => [saleUpdated(next)] };
  });
  if (!updated) throw notFound(`No sale with id ${saleId} in this program`);
  return toSale(updated);
}
