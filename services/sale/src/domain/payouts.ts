import type { Payout, PayoutStatus } from '@affiliate/contracts';
import { AppError, conflict, notFound, toMinorUnits, type PageRequest } from '@affiliate/platform';
import { findAffiliate } from '../data-access/affiliate-directory';
import { toPayout, type PayoutDocument, type PayoutFilters, type PayoutItemDocument } from '../data-access/payouts';
import type { SaleWithCommissions } from '../data-access/sales';
import { claimForPayout, isDue, isRefused, markPaid, releaseFromPayout, type CommissionEntry, type Transition } from './commission';
import { draftPayout, finishedDraft, settlePayout, totalOf } from './payout';
import type { SaleDependencies } from './sale-dependencies';
import { saleUpdated } from './sale-events';

/** A run extends its lease after every batch of claims; one that dies holds the program's payouts this long at most. */
const RUN_LEASE_MS = 15_000;
/** A second POST /payouts waits this long for the running one (below the gateway's 10 s), then answers 409. */
const RUN_WAIT_MS = 6_000;
/**
 * A run starts no new payout after this long, so that it answers within the gateway's timeout; what
 * it left is still due, and the next POST /payouts takes it (call until it answers an empty list).
 */
const RUN_BUDGET_MS = 5_000;
/** Commissions claimed at once: each claim is its own sale's write, independent of the others. */
const CLAIMS_AT_ONCE = 16;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const noPayout = (payoutId: string) => notFound(`No payout with id ${payoutId} in this program`);

/**
 * POST /payouts: every DUE commission (hold passed, in no payout), adjustments included, gathered
 * into one payout per affiliate and currency whose total is positive and reaches the minimum payout
 * of the affiliate's plan. Each commission is claimed by a conditional write on its sale, and only
 * one run per program works at a time, so no commission is ever in two payouts.
 */
export async function createPayouts(
  deps: SaleDependencies,
  programId: string,
  input: { affiliateId?: string; currency?: string },
): Promise<Payout[]> {
  const startedAt = Date.now();
  const progress = { tookTurn: false };
  try {
    const created = await runPayouts(deps, programId, input, progress);
    deps.payoutMetrics?.ran('completed', startedAt, created.length);
    return created;
  } catch (error) {
    // A 409 before the run had its turn is another run holding it; after, this run lost its lease.
    const refused = error instanceof AppError && error.status === 409;
    deps.payoutMetrics?.ran(refused ? (progress.tookTurn ? 'lost_lease' : 'busy') : 'failed', startedAt, 0);
    throw error;
  }
}

async function runPayouts(
  deps: SaleDependencies,
  programId: string,
  input: { affiliateId?: string; currency?: string },
  progress: { tookTurn: boolean },
): Promise<Payout[]> {
  const run = { programId, token: await takeRun(deps, programId) };
  progress.tookTurn = true;
  const deadline = Date.now() + RUN_BUDGET_MS;
  // Counted once it holds the lease: runs waiting for the lease hold nothing, and answer 409 as before.
  let leaveHeavy: (() => void) | undefined;
  try {
    leaveHeavy = deps.heavyOperations.enter(programId);
    // A dead run's drafts first: they become payouts now, and are answered with the new ones.
    const created: PayoutDocument[] = [];
    for (const draft of await deps.repositories.payouts.drafts(programId)) {
      const payout = await finishDraft(deps, draft, run);
      if (payout) created.push(payout);
    }
    for (const group of await dueGroups(
      deps.repositories.sales.withCommissionsOutsidePayouts(programId, input.affiliateId),
      input.currency,
      new Date(),
    )) {
      if (Date.now() > deadline) break;
      const draft = await draftOf(deps, programId, group);
      if (!draft) continue;
      await deps.repositories.payouts.insert(draft, () => []);
      const payout = await finishDraft(deps, draft, run);
      if (payout) created.push(payout);
    }
    return created.map(toPayout);
  } finally {
    leaveHeavy?.();
    await deps.repositories.payoutRuns.release(programId, run.token);
  }
}

type Run = { programId: string; token: string };

/** Keeps the run's lease; a run that lost it (it stalled past the lease) stops, and the run that took over finishes its draft. */
async function stillOurs(deps: SaleDependencies, run: Run): Promise<void> {
  if (!(await deps.repositories.payoutRuns.extend(run.programId, run.token, RUN_LEASE_MS))) {
    throw conflict('This payout run stalled and another took over; retry', 'concurrent_modification');
  }
}

async function takeRun(deps: SaleDependencies, programId: string): Promise<string> {
  const deadline = Date.now() + RUN_WAIT_MS;
  for (;;) {
    const token = await deps.repositories.payoutRuns.take(programId, RUN_LEASE_MS);
    if (token) return token;
    if (Date.now() > deadline) throw conflict('Payouts are being created for this program right now; retry', 'concurrent_modification');
    await pause(100);
  }
}

type Group = { affiliateId: string; currency: string; items: PayoutItemDocument[] };

/**
 * The due commissions per affiliate and currency, oldest sale first (the order the sales arrive in).
 * The sales come one batch at a time and only each due commission's ids and amount are kept, so a
 * run over a program with a long unpaid history holds a few numbers per commission, not its sales.
 */
async function dueGroups(sales: AsyncIterable<SaleWithCommissions>, currency: string | undefined, now: Date): Promise<Group[]> {
  const groups = new Map<string, Group>();
  for await (const sale of sales) {
    for (const commission of sale.commissions) {
      if (!isDue(commission, sale, now) || (currency !== undefined && commission.currency !== currency)) continue;
      const key = `${commission.affiliateId} ${commission.currency}`;
      const group = groups.get(key) ?? { affiliateId: commission.affiliateId, currency: commission.currency, items: [] };
      group.items.push({ saleId: sale._id, commissionId: commission.id, amountMinor: commission.amountMinor });
      groups.set(key, group);
    }
  }
  return [...groups.values()];
}

/** A payout for the group, or null: nothing to pay, below the plan's minimum, or no affiliate left to pay. */
async function draftOf(deps: SaleDependencies, programId: string, group: Group): Promise<PayoutDocument | null> {
  const total = totalOf(group.items);
  if (total <= 0) return null;
  const affiliate = await findAffiliate(deps.affiliates, programId, group.affiliateId);
  if (!affiliate) return null;
  const minimum = affiliate.plan.minimumPayout;
  if (minimum !== null && total < toMinorUnits(minimum, group.currency)) return null;
  const payee = { name: `${affiliate.firstName} ${affiliate.lastName}`, email: affiliate.email, payoutDetails: affiliate.payoutDetails };
  return draftPayout({ programId, affiliateId: group.affiliateId, currency: group.currency, items: group.items, payee, now: new Date() });
}

/**
 * Claims the draft's commissions one sale at a time, then shows the payout with what it claimed.
 * Run again on a draft a crash left behind, it claims what is left and keeps what it had.
 */
async function finishDraft(deps: SaleDependencies, draft: PayoutDocument, run: Run): Promise<PayoutDocument | null> {
  const claimed: PayoutItemDocument[] = [];
  for (let start = 0; start < draft.items.length; start += CLAIMS_AT_ONCE) {
    await stillOurs(deps, run);
    const batch = draft.items.slice(start, start + CLAIMS_AT_ONCE);
    const mine = await Promise.all(batch.map((item) => claim(deps, draft, item)));
    claimed.push(...batch.filter((_item, index) => mine[index]));
  }
  const finished = finishedDraft(claimed, new Date());
  if (finished === 'DISCARD') {
    // Its positive commissions went meanwhile (a reversal voided them): give back what it took.
    for (const item of claimed) await giveBack(deps, draft, item);
    await deps.repositories.payouts.discardDraft(draft.programId, draft._id);
    return null;
  }
  return deps.repositories.payouts.change(draft.programId, draft._id, () => ({ set: finished, events: () => [] }));
}

/**
 * Moves one commission of a sale by a transition of domain/commission.ts, with sale.updated (a
 * reversed sale's subscribers had sale.deleted: nothing more). True when the commission is in the
 * state the transition leads to (changed now, or already: a retry); false when it refused.
 */
async function changeCommission(
  deps: SaleDependencies,
  payout: PayoutDocument,
  item: PayoutItemDocument,
  transition: (commission: CommissionEntry) => Transition,
): Promise<boolean> {
  let accepted = false;
  await deps.repositories.sales.changeEvenIfReversed(payout.programId, item.saleId, (current) => {
    const commission = current.commissions.find((entry) => entry.id === item.commissionId);
    const result = commission ? transition(commission) : null;
    accepted = result !== null && !isRefused(result);
    if (!result || isRefused(result) || result.entry === commission) return null;
    const { entry } = result;
    return {
      set: { commissions: current.commissions.map((each) => (each.id === item.commissionId ? entry : each)), updatedAt: new Date() },
      events: (stored) => (stored.reversedAt ? [] : [saleUpdated(stored)]),
    };
  });
  return accepted;
}

/** True when the commission is this payout's: claimed now, or by an earlier try of the same draft. */
const claim = (deps: SaleDependencies, payout: PayoutDocument, item: PayoutItemDocument) =>
  changeCommission(deps, payout, item, (commission) => claimForPayout(commission, payout._id));

const giveBack = (deps: SaleDependencies, payout: PayoutDocument, item: PayoutItemDocument) =>
  changeCommission(deps, payout, item, (commission) => releaseFromPayout(commission, payout._id));

const paid = (deps: SaleDependencies, payout: PayoutDocument, item: PayoutItemDocument) =>
  changeCommission(deps, payout, item, (commission) => markPaid(commission, payout._id));

/**
 * PUT /payouts: PAID marks its commissions PAID; FAILED gives them back (DUE again, for the next
 * run). The payout changes first and is marked as settling until every commission follows, so the
 * same PUT again, after a crash, finishes the job; any other change of a settled payout is a 400.
 */
export async function updatePayout(
  deps: SaleDependencies,
  programId: string,
  input: { payoutId: string; status: Exclude<PayoutStatus, 'PENDING'>; externalReference?: string },
): Promise<Payout> {
  const changed = await deps.repositories.payouts.change(programId, input.payoutId, (current) => {
    const set = settlePayout(current, input, new Date());
    return set && { set, events: () => [] };
  });
  if (!changed) {
    const payout = await deps.repositories.payouts.shown(programId, input.payoutId);
    if (!payout) throw noPayout(input.payoutId);
    return toPayout(payout);
  }
  for (let start = 0; start < changed.items.length; start += CLAIMS_AT_ONCE) {
    const batch = changed.items.slice(start, start + CLAIMS_AT_ONCE);
    await Promise.all(batch.map((item) => (input.status === 'PAID' ? paid(deps, changed, item) : giveBack(deps, changed, item))));
  }
  const settled = await deps.repositories.payouts.change(programId, changed._id, () => ({ set: { settling: false }, events: () => [] }));
  return toPayout(settled ?? changed);
}

export async function payoutById(deps: SaleDependencies, programId: string, payoutId: string): Promise<PayoutDocument> {
  const payout = await deps.repositories.payouts.shown(programId, payoutId);
  if (!payout) throw noPayout(payoutId);
  return payout;
}

export function listPayouts(deps: SaleDependencies, programId: string, filters: PayoutFilters, page: PageRequest) {
  return deps.repositories.payouts.list(programId, filters, page);
}
