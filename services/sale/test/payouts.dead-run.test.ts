import type { Affiliate, Payout, Sale } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { PayoutRunLeases } from '../src/data-access/payout-runs';
import { PayoutRepository, type PayoutDocument } from '../src/data-access/payouts';
import { SaleRepository } from '../src/data-access/sales';
import { claimForPayout, isRefused } from '../src/domain/commission';
import { draftPayout } from '../src/domain/payout';
import { saleUpdated } from '../src/domain/sale-events';
import { createAffiliate, createReferral, saleWorldOfThisFile } from './sale-world';

/**
 * The recovery of a payout run that died (domain/payouts.ts): a run stores each batch's drafts before
 * it claims their commissions, so a run killed half-way leaves DRAFT payouts, some of their
 * commissions claimed and some not, the due commissions of later batches untouched, and its lease
 * until it expires. That state is made here exactly, through the run's own repositories and
 * transitions on the service's database (a kill of a whole system cannot choose the moment:
 * system-tests/test/payouts.test.ts), and the next POST /payouts must finish it.
 */
const world = saleWorldOfThisFile();

type Seeded = { programId: string; affiliates: { affiliate: Affiliate; saleIds: string[] }[] };

/** A program paying 20 % at once, and affiliates with `counts` sales of 10 each. */
async function programWithSales(counts: number[]): Promise<Seeded> {
  const programId = newProgramId();
  await world()
    .api(world().affiliate, programId)
    .post('/commission-plans', { name: 'Now', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 0, isDefault: true })
    .expect(200);
  const api = world().api(world().sale, programId);
  const affiliates: Seeded['affiliates'] = [];
  for (const count of counts) {
    const affiliate = await createAffiliate(world(), programId);
    const referral = await createReferral(world(), programId, { affiliateId: affiliate.id });
    const saleIds: string[] = [];
    for (let index = 0; index < count; index += 1)
      saleIds.push((await api.post('/sales', { referralId: referral.id, totalEarned: 10 }).expect(200)).body.id);
    affiliates.push({ affiliate, saleIds });
  }
  return { programId, affiliates };
}

/** The run's own pieces on the service's database, as a run that then died used them. */
function deadRun(programId: string) {
  const store = { connection: world().sale.context.connection };
  const sales = new SaleRepository(store);
  const payouts = new PayoutRepository(store);
  return {
    /** The draft a run stores for an affiliate's sales before it claims any of their commissions. */
    async draft(affiliate: Affiliate, saleIds: string[]): Promise<PayoutDocument> {
      const items = [];
      for (const saleId of saleIds) {
        const commission = (await sales.byId(programId, saleId))!.commissions[0]!;
        items.push({ saleId, commissionId: commission.id, amountMinor: commission.amountMinor });
      }
      const payee = { name: `${affiliate.firstName} ${affiliate.lastName}`, email: affiliate.email, payoutDetails: null };
      return draftPayout({ programId, affiliateId: affiliate.id, currency: 'USD', items, payee, now: new Date() });
    },
    insertDrafts: (drafts: PayoutDocument[]) => payouts.insertDrafts(drafts),
    /** The draft's commissions of these sales claimed for it, each sale with its sale.updated, as the run's claims write them. */
    async claim(draft: PayoutDocument, saleIds: string[]) {
      const claimed = new Set(draft.items.filter((item) => saleIds.includes(item.saleId)).map((item) => item.commissionId));
      await sales.changeEachEvenIfReversed(programId, saleIds, (current) => {
        const commissions = current.commissions.map((entry) => {
          const result = claimed.has(entry.id) ? claimForPayout(entry, draft._id) : null;
          return result && !isRefused(result) ? result.entry : entry;
        });
        return { set: { commissions, updatedAt: new Date() }, events: (stored) => [saleUpdated(stored)] };
      });
    },
    /** The dead run's lease, expired: the next run takes it over. */
    lease: () => new PayoutRunLeases(store).take(programId, 1),
  };
}

const commissionIdsOf = (payout: Payout) => payout.commissions.map((item) => item.commissionId).sort();

test('the next run finishes the drafts a dead run left half-claimed and pays the rest: each commission ends in exactly one payout', async () => {
  const { programId, affiliates } = await programWithSales([6, 4, 3]);
  const [grace, alan, edsger] = affiliates as [Seeded['affiliates'][number], Seeded['affiliates'][number], Seeded['affiliates'][number]];
  const run = deadRun(programId);
  // The dead run drafted Grace's and Alan's payouts, claimed half of Grace's and one of Alan's, and
  // never reached Edsger's batch.
  const drafts = [await run.draft(grace.affiliate, grace.saleIds), await run.draft(alan.affiliate, alan.saleIds)];
  await run.insertDrafts(drafts);
  await run.claim(drafts[0]!, grace.saleIds.slice(0, 3));
  await run.claim(drafts[1]!, alan.saleIds.slice(0, 1));
  expect(await run.lease()).not.toBeNull();

  const api = world().api(world().sale, programId);
  // Drafts are never shown: the half-done run paid nobody yet.
  expect((await api.get('/payouts').expect(200)).body).toEqual([]);

  const answered = (await api.post('/payouts', {}).expect(200)).body as Payout[];
  const byAffiliate = new Map(answered.map((payout) => [payout.affiliateId, payout]));
  expect(answered).toHaveLength(3);
  // The drafts became payouts under their own ids, with every commission they were drafted with.
  for (const [draft, owner] of [
    [drafts[0]!, grace],
    [drafts[1]!, alan],
  ] as const) {
    expect(byAffiliate.get(owner.affiliate.id)).toMatchObject({ id: draft._id, status: 'PENDING', amount: 2 * owner.saleIds.length });
    expect(commissionIdsOf(byAffiliate.get(owner.affiliate.id)!)).toEqual(draft.items.map((item) => item.commissionId).sort());
  }
  expect(byAffiliate.get(edsger.affiliate.id)).toMatchObject({ status: 'PENDING', amount: 6 });
  expect(
    byAffiliate
      .get(edsger.affiliate.id)!
      .commissions.map((item) => item.saleId)
      .sort(),
  ).toEqual([...edsger.saleIds].sort());

  // Each commission is in exactly one payout, and its sale names that payout.
  const listed = (await api.get('/payouts', { limit: '100' }).expect(200)).body as Payout[];
  const holders = listed.flatMap((payout) => payout.commissions.map((item) => ({ ...item, payoutId: payout.id })));
  expect(holders).toHaveLength(13);
  expect(new Set(holders.map((item) => item.commissionId)).size).toBe(13);
  const sales = (await api.get('/sales', { limit: '100' }).expect(200)).body as Sale[];
  expect(sales).toHaveLength(13);
  for (const sale of sales) {
    const holder = holders.find((item) => item.saleId === sale.id);
    expect({ sale: sale.id, payoutCreated: sale.commissions[0]!.payoutCreated, payoutId: sale.commissions[0]!.payoutId }).toEqual({
      sale: sale.id,
      payoutCreated: true,
      payoutId: holder?.payoutId,
    });
  }
  expect((await api.post('/payouts', {}).expect(200)).body).toEqual([]);
});

test("a dead run's draft whose unclaimed commissions were voided since is finished with what it claimed; one with nothing left is discarded", async () => {
  const { programId, affiliates } = await programWithSales([3, 2]);
  const [grace, alan] = affiliates as [Seeded['affiliates'][number], Seeded['affiliates'][number]];
  const run = deadRun(programId);
  const drafts = [await run.draft(grace.affiliate, grace.saleIds), await run.draft(alan.affiliate, alan.saleIds)];
  await run.insertDrafts(drafts);
  await run.claim(drafts[0]!, grace.saleIds.slice(0, 1));
  expect(await run.lease()).not.toBeNull();

  // Meanwhile the other sales were reversed: their commissions are void, no longer to be paid.
  const api = world().api(world().sale, programId);
  for (const saleId of [...grace.saleIds.slice(1), ...alan.saleIds]) await api.delete('/sales', { saleId }).expect(200);

  const answered = (await api.post('/payouts', {}).expect(200)).body as Payout[];
  expect(answered).toEqual([expect.objectContaining({ id: drafts[0]!._id, affiliateId: grace.affiliate.id, amount: 2 })]);
  expect(answered[0]!.commissions.map((item) => item.saleId)).toEqual([grace.saleIds[0]]);
  expect((await api.get('/payouts', { limit: '100' }).expect(200)).body).toEqual([expect.objectContaining({ id: drafts[0]!._id })]);
  expect((await api.post('/payouts', {}).expect(200)).body).toEqual([]);
});
