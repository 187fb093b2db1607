import { TEAM_MEMBER_ID_PREFIX, type CommissionListItem, type Sale } from '@affiliate/contracts';
import { badRequest, csvText, fromMinorUnits, minorUnitDigits, notFound, type CsvRow, type PageRequest } from '@affiliate/platform';
import type { SaleRepositories } from '../data-access/repositories';
import { toSale, type CommissionFilters } from '../data-access/sales';
import {
  availableAtOf,
  isRefused,
  release,
  statusOf,
  voidCommission,
  type CommissionDecision,
  type CommissionEntry,
  type DecidedBy,
  type Transition,
} from './commission';
import { saleUpdated } from './sale-events';

type Decide = (commission: CommissionEntry, decision: Omit<CommissionDecision, 'action'>) => Transition;

/**
 * A reviewer's decision on one commission, as one conditional write of its sale (a revision check):
 * a payout run claiming the same commission at the same moment is another such write, so exactly
 * one of them lands and the other meets the state it left (RELIABILITY.md). A refusal (not HELD,
 * already in a payout, paid, void) is a 400 naming the state; the sale is unchanged.
 */
async function decide(
  repositories: SaleRepositories,
  programId: string,
  input: { saleId: string; commissionId: string },
  transition: Decide,
  decision: Omit<CommissionDecision, 'action'>,
): Promise<Sale> {
  const changed = await repositories.sales.change(programId, input.saleId, (current) => {
    const commission = current.commissions.find((entry) => entry.id === input.commissionId);
    if (!commission) throw notFound(`Sale ${input.saleId} has no commission ${input.commissionId}`);
    const result = transition(commission, decision);
    if (isRefused(result)) throw badRequest(`commissionId: ${result.message}`, 'status_transition_invalid', 'commissionId');
    return {
      set: { commissions: current.commissions.map((entry) => (entry.id === commission.id ? result.entry : entry)), updatedAt: new Date() },
      events: (next) => [saleUpdated(next)],
    };
  });
  if (!changed) throw notFound(`No sale with id ${input.saleId} in this program`);
  return toSale(changed);
}

/**
 * The gateway forwards who decided in the key headers: an API key's id and prefix, or, for a team
 * member's console session, the member's id (`mbr_…`) and email.
 */
const byKey = (key: { keyId: string | null; keyPrefix: string | null }): DecidedBy => ({
  kind: key.keyId?.startsWith(TEAM_MEMBER_ID_PREFIX) ? 'TEAM_MEMBER' : 'API_KEY',
  ...key,
});

/** POST /commissions/release: a HELD commission is PENDING or DUE again by its date. */
export function releaseCommission(
  repositories: SaleRepositories,
  programId: string,
  input: { saleId: string; commissionId: string; note?: string },
  key: { keyId: string | null; keyPrefix: string | null },
): Promise<Sale> {
  return decide(repositories, programId, input, release, { at: new Date(), by: byKey(key), reason: input.note ?? null });
}

/** POST /commissions/void: a HELD, PENDING or DUE commission in no payout is VOID, with the reason. */
export function voidReviewedCommission(
  repositories: SaleRepositories,
  programId: string,
  input: { saleId: string; commissionId: string; reason: string },
  key: { keyId: string | null; keyPrefix: string | null },
): Promise<Sale> {
  return decide(repositories, programId, input, voidCommission, { at: new Date(), by: byKey(key), reason: input.reason });
}

/**
 * GET /commissions: the commissions of a page of sales (newest first) that match the filters, each
 * with its sale's id and risk. Pages go by sale: the cursor is the last commission's saleId.
 */
/** The commission matches what the list asked for (the sales found have one that does, not necessarily every one). */
const matches = (filters: CommissionFilters, commission: { status: string; affiliateId: string; currency: string }): boolean =>
  (filters.status === undefined || commission.status === filters.status) &&
  (filters.affiliateId === undefined || commission.affiliateId === filters.affiliateId) &&
  (filters.currency === undefined || commission.currency === filters.currency);

export async function listCommissions(
  repositories: SaleRepositories,
  programId: string,
  filters: CommissionFilters,
  page: PageRequest,
): Promise<{ items: CommissionListItem[]; nextCursor: string | null }> {
  const now = new Date();
  const { items, nextCursor } = await repositories.sales.withCommissions(programId, filters, page, now);
  const listed = items.flatMap((document) => {
    const sale = toSale(document, now);
    return sale.commissions
      .filter((commission) => matches(filters, commission))
      .map((commission) => ({ ...commission, saleId: sale.id, risk: sale.risk }));
  });
  return { items: listed, nextCursor };
}

/**
 * The filtered commissions as CSV rows, their sales newest first. Ids, amounts and states are ours;
 * the payout id is the integrator's own when PUT /sales marked it (any text), so it is guarded.
 */
export async function* commissionCsvRows(
  repositories: SaleRepositories,
  programId: string,
  filters: CommissionFilters,
): AsyncGenerator<CsvRow> {
  const now = new Date();
  for await (const sale of repositories.sales.commissionsToExport(programId, filters, now)) {
    for (const commission of sale.commissions) {
      const status = statusOf(commission, sale, now);
      if (!matches(filters, { status, affiliateId: commission.affiliateId, currency: commission.currency })) continue;
      yield [
        commission.id,
        sale._id,
        commission.affiliateId,
        fromMinorUnits(commission.amountMinor, commission.currency).toFixed(minorUnitDigits(commission.currency)),
        commission.currency,
        status,
        availableAtOf(commission, sale).toISOString(),
        commission.adjusts ?? '',
        csvText(commission.payoutId),
        sale.createdAt.toISOString(),
      ];
    }
  }
}
