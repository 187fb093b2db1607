import type { InternalAffiliate, Payout, PayoutStatus } from '@affiliate/contracts';
import { AppError, conflict, notFound, toMinorUnits, type PageRequest } from '@affiliate/platform';
import { findAffiliate } from '../data-access/affiliate-directory';
import { toPayout, type PayoutDocument, type PayoutFilters, type PayoutItemDocument } from '../data-access/payouts';
import type { SaleWithCommissions } from '../data-access/sales';
import { claimForPayout, isDue, isRefused, markPaid, releaseFromPayout, type CommissionEntry, type Transition } from './commission';
import { draftPayout, finishedDraft, settlePayout, totalOf } from './payout';
import type { SaleDependencies } from './sale-dependencies';
import { saleUpdated } from './sale-events';

/** A run extends its lease before every batch of claims; one that dies holds the program's payouts this long at most. */
const RUN_LEASE_MS = 15_000;
/** A second POST /payouts waits this long for the running one (below the gateway's 10 s), then answers 409. */
const RUN_WAIT_MS = 6_000;
/**
 * A run starts no new payout after this long, so that it answers within the gateway's timeout; what
 * it left is still due, and the next POST /payouts takes it (call until it answers an empty list).
 */
const RUN_BUDGET_MS = 5_000;
/**
 * Sales whose commissions are moved by one read and one bulk write (claims, PAID, FAILED), and about
 * as many commissions as the drafts a run starts at once hold: a batch is one command to the
 * database, not one write per commission, and its sales (whole, for their sale.updated) are what a
 * run holds in memory at a time.
 */
const SALES_PER_BATCH = 500;
/** Affiliates looked up at once when drafting (one call each to the affiliate service). */
const LOOKUPS_AT_ONCE = 16;

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
  // Lookups started ahead for a batch the run will not reach stop asking once it has ended.
  const lookups = { ended: false };
  try {
    leaveHeavy = deps.heavyOperations.enter(programId);
    // A dead run's drafts first: they become payouts now, and are answered with the new ones.
    const created = await finishDrafts(deps, await deps.repositories.payouts.drafts(programId), run);
    const groups = await dueGroups(
      deps.repositories.sales.withCommissionsOutsidePayouts(programId, input.affiliateId),
      input.currency,
      new Date(),
    );
    const affiliates = new Map<string, Promise<InternalAffiliate | null>>();
    const batches = [...batchesOf(groups)];
    const draftsOfBatch = (index: number) => {
      const batch = batches[index];
      if (!batch || Date.now() > deadline) return undefined;
      const drafting = draftsOf(deps, programId, batch, affiliates, lookups);
      // Awaited below, unless the run stops first (its budget, a lost lease): never an unhandled rejection.
      drafting.catch(() => undefined);
      return drafting;
    };
    let drafting = draftsOfBatch(0);
    for (let index = 0; drafting && Date.now() <= deadline; index += 1) {
      // Each batch's drafts are stored before any of their commissions is claimed: a run that dies
      // leaves drafts, which the next run finishes (nothing claimed is lost, nothing claimed twice).
      const drafts = await drafting;
      // The next batch's payees are asked for while this batch's commissions are claimed: the
      // affiliate service answers beside the claims' writes instead of after them.
      drafting = draftsOfBatch(index + 1);
      await deps.repositories.payouts.insertDrafts(drafts);
      created.push(...(await finishDrafts(deps, drafts, run)));
    }
    return created.map(toPayout);
  } finally {
    lookups.ended = true;
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

/** The groups in runs of about SALES_PER_BATCH commissions, a group whole: what one batch of drafts holds. */
function* batchesOf(groups: Group[]): Generator<Group[]> {
  let batch: Group[] = [];
  let commissions = 0;
  for (const group of groups) {
    batch.push(group);
    commissions += group.items.length;
    if (commissions >= SALES_PER_BATCH) {
      yield batch;
      batch = [];
      commissions = 0;
    }
  }
  if (batch.length > 0) yield batch;
}

/** The drafts of the groups that make a payout, their affiliates asked for a few at once (and once per run). */
async function draftsOf(
  deps: SaleDependencies,
  programId: string,
  groups: Group[],
  affiliates: Map<string, Promise<InternalAffiliate | null>>,
  lookups: { ended: boolean },
): Promise<PayoutDocument[]> {
  const drafts: (PayoutDocument | null)[] = [];
  for (let start = 0; start < groups.length && !lookups.ended; start += LOOKUPS_AT_ONCE) {
    const slice = groups.slice(start, start + LOOKUPS_AT_ONCE);
    drafts.push(...(await Promise.all(slice.map((group) => draftOf(programId, group, affiliateOf(deps, programId, group, affiliates))))));
  }
  return drafts.filter((draft): draft is PayoutDocument => draft !== null);
}

function affiliateOf(
  deps: SaleDependencies,
  programId: string,
  group: Group,
  affiliates: Map<string, Promise<InternalAffiliate | null>>,
): Promise<InternalAffiliate | null> {
  const known = affiliates.get(group.affiliateId) ?? findAffiliate(deps.affiliates, programId, group.affiliateId);
  // A group with nothing to pay never awaits its lookup: its failure must not go unhandled (the
  // process exits on one), while a draft that awaits it still meets the failure.
  known.catch(() => undefined);
  affiliates.set(group.affiliateId, known);
  return known;
}

/** A payout for the group, or null: nothing to pay, below the plan's minimum, or no affiliate left to pay. */
async function draftOf(programId: string, group: Group, lookup: Promise<InternalAffiliate | null>): Promise<PayoutDocument | null> {
  const total = totalOf(group.items);
  if (total <= 0) return null;
  const affiliate = await lookup;
  if (!affiliate) return null;
  const minimum = affiliate.plan.minimumPayout;
  if (minimum !== null && total < toMinorUnits(minimum, group.currency)) return null;
  const payee = { name: `${affiliate.firstName} ${affiliate.lastName}`, email: affiliate.email, payoutDetails: affiliate.payoutDetails };
  return draftPayout({ programId, affiliateId: group.affiliateId, currency: group.currency, items: group.items, payee, now: new Date() });
}

/**
 * Claims the drafts' commissions, a batch of sales at a time, then shows each payout with what it
 * claimed (one write for all of them). Run again on drafts a crash left behind, it claims what is
 * left and keeps what they had.
 */
async function finishDrafts(deps: SaleDependencies, drafts: PayoutDocument[], run: Run): Promise<PayoutDocument[]> {
  if (drafts.length === 0) return [];
  const claims = drafts.flatMap((payout) => payout.items.map((item) => ({ payout, item })));
  const mine = await moveCommissions(deps, run.programId, claims, claimForPayout, () => stillOurs(deps, run));
  const claimed = new Map<string, PayoutItemDocument[]>(drafts.map((draft) => [draft._id, []]));
  claims.forEach(({ payout, item }, index) => {
    if (mine[index]) claimed.get(payout._id)?.push(item);
  });
  const now = new Date();
  const finished = new Map<string, Partial<PayoutDocument>>();
  const shown: PayoutDocument[] = [];
  for (const draft of drafts) {
    const mineOfDraft = claimed.get(draft._id) ?? [];
    const result = finishedDraft(mineOfDraft, now);
    if (result === 'DISCARD') {
      // Its positive commissions went meanwhile (a reversal voided them): give back what it took.
      await moveCommissions(
        deps,
        run.programId,
        mineOfDraft.map((item) => ({ payout: draft, item })),
        releaseFromPayout,
      );
      await deps.repositories.payouts.discardDraft(draft.programId, draft._id);
      continue;
    }
    finished.set(draft._id, result);
    shown.push({ ...draft, ...result });
  }
  await deps.repositories.payouts.finishDrafts(run.programId, finished);
  return shown;
}

type Move = { payout: PayoutDocument; item: PayoutItemDocument };

/**
 * Moves commissions by a transition of domain/commission.ts, each sale's in one revision-checked
 * write with its sale.updated (a reversed sale's subscribers had sale.deleted: nothing more), a
 * batch of sales per read and bulk write; `beforeBatch` runs before each (a run's lease). Answers,
 * per move, whether its commission is in the state the transition leads to (changed now, or
 * already: a retry); false when it refused, or when its sale's write did not land (the sale went).
 */
async function moveCommissions(
  deps: SaleDependencies,
  programId: string,
  moves: Move[],
  transition: (commission: CommissionEntry, payoutId: string) => Transition,
  beforeBatch: () => Promise<void> = async () => {},
): Promise<boolean[]> {
  const accepted = moves.map(() => false);
  const movesOfSale = new Map<string, number[]>();
  moves.forEach((move, index) => movesOfSale.set(move.item.saleId, [...(movesOfSale.get(move.item.saleId) ?? []), index]));
  const saleIds = [...movesOfSale.keys()];
  for (let start = 0; start < saleIds.length; start += SALES_PER_BATCH) {
    await beforeBatch();
    const batch = saleIds.slice(start, start + SALES_PER_BATCH);
    const settled = await deps.repositories.sales.changeEachEvenIfReversed(programId, batch, (current) => {
      let commissions = current.commissions;
      for (const index of movesOfSale.get(current._id) ?? []) {
        const { payout, item } = moves[index]!;
        const commission = commissions.find((entry) => entry.id === item.commissionId);
        const result = commission ? transition(commission, payout._id) : null;
        accepted[index] = result !== null && !isRefused(result);
        if (!result || isRefused(result) || result.entry === commission) continue;
        const { entry } = result;
        commissions = commissions.map((each) => (each.id === item.commissionId ? entry : each));
      }
      if (commissions === current.commissions) return null;
      return { set: { commissions, updatedAt: new Date() }, events: (stored) => (stored.reversedAt ? [] : [saleUpdated(stored)]) };
    });
    // A sale not settled was never read, or went before its write landed: what was decided for its moves did not happen.
    for (const saleId of batch) {
      if (settled.has(saleId)) continue;
      for (const index of movesOfSale.get(saleId) ?? []) accepted[index] = false;
    }
  }
  return accepted;
}

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
  const moves = changed.items.map((item) => ({ payout: changed, item }));
  await moveCommissions(deps, programId, moves, input.status === 'PAID' ? markPaid : releaseFromPayout);
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
