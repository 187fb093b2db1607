import type { Sale, UpdateSaleBody } from '@affiliate/contracts';
import { badRequest, notFound, percentOfMinorUnits, toMinorUnits } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import { toSale, type SaleDocument } from '../data-access/sales';
import { isRefused, markByHand, stateOf } from './commission';
import { saleUpdated } from './sale-events';

/**
 * PUT /sales: recalculate the commission (a new amount or rate) and/or mark it as rolled into a
 * payout. sale.updated carries the stored state, with payoutCreated and payoutId on the commission.
 */
export async function updateSale(repositories: SaleRepositories, programId: string, input: UpdateSaleBody): Promise<Sale> {
  const { saleId, totalEarned, commissionRate, payoutId, payoutCreated } = input;
  if ([totalEarned, commissionRate, payoutId, payoutCreated].every((value) => value === undefined)) {
    throw badRequest('Nothing to update: send totalEarned, commissionRate, payoutId or payoutCreated');
  }
  if (payoutCreated === false && typeof payoutId === 'string') {
    throw badRequest('payoutId: a commission with a payoutId is in a payout; send payoutCreated true or leave it out');
  }
  const updated = await repositories.sales.change(programId, saleId, async (current) => {
    const [commission, ...others] = current.commissions;
    if (!commission) throw badRequest(`Sale ${saleId} has no commission to update`);
    // A payout run's own payouts are settled by PUT /payouts, never by hand here.
    const inRunPayout = stateOf(commission) === 'OPEN' && commission.payoutId !== null && (await repositories.payouts.byId(programId, commission.payoutId)) !== null;
    const inPayout = payoutCreated ?? (payoutId === undefined ? commission.payoutCreated : payoutId !== null);
    const recalculating = totalEarned !== undefined || commissionRate !== undefined;
    const nextTotal = totalEarned === undefined ? current.totalEarnedMinor : toMinorUnits(totalEarned, current.currency);
    // A flat commission does not follow the amount; a rate sent makes it that percentage.
    const nextRate = commissionRate ?? current.commissionRate;
    const commissionEarnedMinor = recalculating && nextRate !== null ? percentOfMinorUnits(nextTotal, nextRate) : current.commissionEarnedMinor;
    const marked = markByHand(commission, {
      saleId,
      amountMinor: commissionEarnedMinor,
      recalculating,
      inPayout,
      payoutId: payoutId === undefined ? commission.payoutId : payoutId,
      inRunPayout,
    });
    if (isRefused(marked)) throw badRequest(marked.message);
    const set: Partial<SaleDocument> = {
      totalEarnedMinor: nextTotal,
      commissionRate: nextRate,
      commissionEarnedMinor,
      commissions: [marked.entry, ...others],
      updatedAt: new Date(),
    };
    return { set, events: (next) => [saleUpdated(next)] };
  });
  if (!updated) throw notFound(`No sale with id ${saleId} in this program`);
  return toSale(updated);
}
