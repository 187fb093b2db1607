import type { PortalStatementRow, Statement, StatementEntry } from '@affiliate/contracts';
import { badRequest, fromMinorUnits } from '@affiliate/platform';
import type { PayoutDocument } from '../data-access/payouts';
import type { SaleForStatement } from '../data-access/sales';
import type { CommissionEntry } from './commission';
import type { SaleDependencies } from './sale-dependencies';

type Entry = Omit<StatementEntry, 'amount' | 'at'> & { at: Date; amountMinor: number };

/**
 * The entries of one commission, each saying what it adds to the balance the program owes the
 * affiliate: EARNED adds it (as first earned); a change of its amount before payout (a partial
 * refund, PUT /sales) is ADJUSTED by the difference when it happened, so a period already stated
 * keeps what it said; HELD takes it away until RELEASED adds it back; VOIDED takes away what was
 * still owed (nothing when it was held); an adjustment entry (a refund or dispute after the payout)
 * is ADJUSTED by its negative amount. Paying it is its payout's PAID_OUT, not an entry here.
 */
function entriesOf(sale: SaleForStatement, commission: CommissionEntry): Entry[] {
  const ids = { saleId: sale._id, commissionId: commission.id, payoutId: null };
  if (commission.adjusts) {
    const at = commission.availableAt ?? sale.reversedAt ?? sale.updatedAt;
    return [
      {
        ...ids,
        type: 'ADJUSTED',
        at,
        amountMinor: commission.amountMinor,
        description: `refund or dispute of sale ${sale._id} after its commission ${commission.adjusts} was paid out`,
      },
    ];
  }
  const changes = commission.amountChanges ?? [];
  let amount = changes[0]?.fromMinor ?? commission.amountMinor;
  const entries: Entry[] = [
    { ...ids, type: 'EARNED', at: sale.createdAt, amountMinor: amount, description: `commission on sale ${sale._id}` },
  ];
  // Decisions and changes of amount in the order they happened (at the same instant, decisions first).
  const history = [
    ...(commission.decisions ?? []).map((decision) => ({ at: new Date(decision.at), decision, change: null })),
    ...changes.map((change) => ({ at: new Date(change.at), decision: null, change })),
  ].sort((a, b) => a.at.getTime() - b.at.getTime());
  let owed = true;
  let voided = false;
  for (const { at, decision, change } of history) {
    if (change) {
      const description = `commission on sale ${sale._id} changed from ${fromMinorUnits(change.fromMinor, commission.currency)} to ${fromMinorUnits(change.toMinor, commission.currency)}${owed ? '' : ' while not owed'}`;
      entries.push({ ...ids, type: 'ADJUSTED', at, amountMinor: owed ? change.toMinor - change.fromMinor : 0, description });
      amount = change.toMinor;
      continue;
    }
    if (!decision) continue;
    const why = decision.reason === null ? '' : `: ${decision.reason}`;
    if (decision.action === 'HOLD')
      entries.push({ ...ids, type: 'HELD', at, amountMinor: owed ? -amount : 0, description: `held for review${why}` });
    if (decision.action === 'RELEASE')
      entries.push({ ...ids, type: 'RELEASED', at, amountMinor: owed ? 0 : amount, description: `released${why}` });
    if (decision.action === 'VOID')
      entries.push({ ...ids, type: 'VOIDED', at, amountMinor: owed ? -amount : 0, description: `voided${why}` });
    owed = decision.action === 'RELEASE';
    voided ||= decision.action === 'VOID';
  }
  // Voided before decisions were recorded (a reversal then): when the sale was reversed.
  if (commission.state === 'VOID' && !voided) {
    entries.push({
      ...ids,
      type: 'VOIDED',
      at: sale.reversedAt ?? sale.updatedAt,
      amountMinor: -amount,
      description: `voided: sale ${sale._id} was reversed`,
    });
  }
  // Rolled by PUT /sales into a payout made outside the payout runs: that payout has no record here, so the commission carries its PAID_OUT.
  if (commission.paidOutByHandAt && commission.payoutCreated) {
    const payoutId = commission.payoutId;
    entries.push({
      ...ids,
      payoutId,
      type: 'PAID_OUT',
      at: new Date(commission.paidOutByHandAt),
      amountMinor: -amount,
      description: `paid outside the payout runs${payoutId ? ` (payout ${payoutId})` : ''}, marked by PUT /sales`,
    });
  }
  return entries;
}

const paidOut = (payout: PayoutDocument): Entry => ({
  type: 'PAID_OUT',
  at: payout.paidAt ?? payout.updatedAt,
  amountMinor: -payout.amountMinor,
  saleId: null,
  commissionId: null,
  payoutId: payout._id,
  description: `payout ${payout._id}${payout.externalReference ? ` (${payout.externalReference})` : ''}`,
});

const sumOf = (entries: Entry[]) => entries.reduce((total, entry) => total + entry.amountMinor, 0);

/**
 * GET /affiliates/statement: what the program owed the affiliate in one currency at `from`, every
 * entry of [from, to) oldest first, and what it owed at `to`. Closing minus opening is the sum of
 * the entries by construction: both balances are sums of the same entries. Read from the
 * affiliate's whole history, one batch of sales at a time (a heavy operation).
 */
export async function affiliateStatement(
  deps: SaleDependencies,
  programId: string,
  query: { affiliateId: string; currency: string; from: string; to?: string },
): Promise<Statement> {
  const from = new Date(query.from);
  const to = query.to === undefined ? new Date() : new Date(query.to);
  // A period that ends before it starts has no meaning (its closing balance would come before its opening).
  if (from > to)
    throw badRequest(
      query.to === undefined ? 'from: must be in the past (to defaults to now)' : 'to: must not be before from',
      'parameter_invalid',
      query.to === undefined ? 'from' : 'to',
    );
  const entries: Entry[] = [];
  for await (const sale of deps.repositories.sales.ofAffiliate(programId, query.affiliateId)) {
    for (const commission of sale.commissions) {
      if (commission.affiliateId === query.affiliateId && commission.currency === query.currency)
        entries.push(...entriesOf(sale, commission));
    }
  }
  for (const payout of await deps.repositories.payouts.paidTo(programId, query.affiliateId, query.currency)) entries.push(paidOut(payout));
  // Oldest first; at the same instant in the order made (a commission held as it is earned: EARNED, then HELD).
  const ordered = entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.at.getTime() - b.entry.at.getTime() || a.index - b.index)
    .map(({ entry }) => entry);
  const before = ordered.filter((entry) => entry.at < from);
  const within = ordered.filter((entry) => entry.at >= from && entry.at < to);
  const money = (minor: number) => fromMinorUnits(minor, query.currency);
  const opening = sumOf(before);
  return {
    affiliateId: query.affiliateId,
    currency: query.currency,
    from: from.toISOString(),
    to: to.toISOString(),
    openingBalance: money(opening),
    entries: within.map(({ amountMinor, at, ...entry }) => ({ ...entry, at: at.toISOString(), amount: money(amountMinor) })),
    closingBalance: money(opening + sumOf(within)),
  };
}

/**
 * GET /internal/affiliate-balances, the affiliate portal's statement: per currency, earned, pending
 * (PENDING and HELD), due and paid, and the balance owed now (the statement's closing balance, by
 * the same rules: what the commissions add, less what was paid out). Two aggregations in the
 * database, so it is light: not a heavy operation, and no cap on the commissions it counts.
 */
export async function affiliateBalances(deps: SaleDependencies, programId: string, affiliateId: string): Promise<PortalStatementRow[]> {
  const [commissions, payouts] = await Promise.all([
    deps.repositories.sales.balancesOfAffiliate(programId, affiliateId, new Date()),
    deps.repositories.payouts.paidTotals(programId, affiliateId),
  ]);
  const paidOut = new Map(payouts.map((row) => [row._id, row.amount]));
  return commissions
    .map((row) => {
      const money = (minor: number) => fromMinorUnits(minor, row._id);
      return {
        currency: row._id,
        earned: money(row.earned),
        pending: money(row.pending),
        due: money(row.due),
        paid: money(row.paid),
        balance: money(row.owed - row.paidByHand - (paidOut.get(row._id) ?? 0)),
      };
    })
    .sort((a, b) => a.currency.localeCompare(b.currency));
}
