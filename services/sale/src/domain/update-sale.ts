import type { Sale, UpdateSaleBody } from '@affiliate/contracts';
import { badRequest, notFound, percentOfMinorUnits, toMinorUnits } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import { stateOf, toSale, type SaleDocument } from '../data-access/sales';
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
    if (stateOf(commission) !== 'OPEN') throw badRequest(`The commission of sale ${saleId} is ${stateOf(commission)}; it cannot be changed`);
    // A payout run's own payouts are settled by PUT /payouts, never by hand here.
    if (commission.payoutId && (await repositories.payouts.byId(programId, commission.payoutId))) {
      throw badRequest(`The commission of sale ${saleId} is in payout ${commission.payoutId}: mark the payout PAID or FAILED with PUT /payouts`);
    }
    const inPayout = payoutCreated ?? (payoutId === undefined ? commission.payoutCreated : payoutId !== null);
    const recalculating = totalEarned !== undefined || commissionRate !== undefined;
    if (recalculating && commission.payoutCreated && inPayout) {
      throw badRequest(`The commission of sale ${saleId} is already in payout ${commission.payoutId ?? ''}`.trimEnd() + '; it cannot be recalculated');
    }
    const nextTotal = totalEarned === undefined ? current.totalEarnedMinor : toMinorUnits(totalEarned, current.currency);
    // A flat commission does not follow the amount; a rate sent makes it that percentage.
    const nextRate = commissionRate ?? current.commissionRate;
    const commissionEarnedMinor = recalculating && nextRate !== null ? percentOfMinorUnits(nextTotal, nextRate) : current.commissionEarnedMinor;
    const set: Partial<SaleDocument> = {
      totalEarnedMinor: nextTotal,
      commissionRate: nextRate,
      commissionEarnedMinor,
      commissions: [
        {
          ...commission,
          amountMinor: commissionEarnedMinor,
          payoutCreated: inPayout,
          payoutId: inPayout ? (payoutId === undefined ? commission.payoutId : payoutId) : null,
        },
        ...others,
      ],
      updatedAt: new Date(),
    };
    return { set, events: (next) => [saleUpdated(next)] };
  });
  if (!updated) throw notFound(`No sale with id ${saleId} in this program`);
  return toSale(updated);
}
