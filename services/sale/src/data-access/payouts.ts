import { shownPayoutDetails, type FullPayoutDetails, type Payout, type PayoutStatus } from '@affiliate/contracts';
import {
  AggregateStore,
  fromMinorUnits,
  outboxPlugin,
  withinPeriod,
  type OutboxFields,
  type PageRequest,
  type Period,
  type StoreContext,
} from '@affiliate/platform';
import { Schema, type Connection, type FilterQuery, type Model } from 'mongoose';

export type PayoutItemDocument = { saleId: string; commissionId: string; amountMinor: number };

/**
 * One payout: the commissions of one affiliate in one currency, gathered by a payout run. A DRAFT is
 * a payout whose run has not finished claiming its commissions: no read shows it, and the next run
 * of the program finishes it before gathering anything new (nothing is claimed twice, nothing lost).
 */
export type PayoutDocument = {
  _id: string;
  programId: string;
  affiliateId: string;
  currency: string;
  amountMinor: number;
  status: 'DRAFT' | PayoutStatus;
  items: PayoutItemDocument[];
  /** Who is paid, as the affiliate service said when the payout was created (a finance team pays this). */
  payee: { name: string; email: string; payoutDetails: FullPayoutDetails | null };
  externalReference: string | null;
  /** Set while a PAID or FAILED is being applied to the commissions; the same PUT again finishes it. */
  settling: boolean;
  paidAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

const schema = new Schema<PayoutDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    currency: { type: String, required: true },
    amountMinor: { type: Number, required: true },
    status: { type: String, required: true },
    items: { type: Schema.Types.Mixed, default: [] },
    payee: { type: Schema.Types.Mixed, required: true },
    externalReference: { type: String, default: null },
    settling: { type: Boolean, default: false },
    paidAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// Which index serves which filter of GET /payouts (the program first and, but for paidAt, ending in
// the list's order, createdAt then _id, so a page is read in order and stops at its limit; a createdAt
// period is a range on the createdAt that follows): none or a createdAt period, the list's order;
// status, affiliateId and currency, their own (given together, one of them, the others filtering what
// it reads); a paidAt period alone, its own: a range of the period's payouts, then sorted into the
// list's order (bounded by the period, docs/lists-and-exports.md).
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, status: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, affiliateId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, currency: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, paidAt: -1 });
schema.plugin(outboxPlugin);

const payoutModel = (connection: Connection): Model<PayoutDocument> => connection.model<PayoutDocument>('Payout', schema, 'payouts');

export type PayoutFilters = { affiliateId?: string; status?: PayoutStatus; currency?: string; createdAt?: Period; paidAt?: Period };

export class PayoutRepository extends AggregateStore<PayoutDocument> {
  constructor(context: StoreContext) {
    super(context, payoutModel);
  }

  /** A payout a reader may see: never a draft. */
  async shown(programId: string, payoutId: string): Promise<PayoutDocument | null> {
    const payout = await this.byId(programId, payoutId);
    return payout && payout.status !== 'DRAFT' ? payout : null;
  }

  list(programId: string, filters: PayoutFilters, page: PageRequest) {
    const filter: FilterQuery<PayoutDocument> = { status: filters.status ?? { $ne: 'DRAFT' } };
    if (filters.affiliateId !== undefined) filter.affiliateId = filters.affiliateId;
    if (filters.currency !== undefined) filter.currency = filters.currency;
    if (filters.createdAt !== undefined) filter.createdAt = withinPeriod(filters.createdAt);
    if (filters.paidAt !== undefined) filter.paidAt = withinPeriod(filters.paidAt);
    return this.page(programId, filter, page);
  }

  /** The affiliate's PAID payouts in one currency: the PAID_OUT entries of its statement. */
  /** What the PAID payouts of one affiliate add up to per currency, in minor units, summed in the database. */
  paidTotals(programId: string, affiliateId: string) {
    return this.model.aggregate<{ _id: string; amount: number }>([
      { $match: { programId, affiliateId, status: 'PAID' } },
      { $group: { _id: '$currency', amount: { $sum: '$amountMinor' } } },
    ]);
  }

  paidTo(programId: string, affiliateId: string, currency: string) {
    return this.all(programId, { affiliateId, currency, status: 'PAID' });
  }

  /** Payouts whose run stopped before it finished them (a crash): the next run completes them. */
  drafts(programId: string) {
    return this.all(programId, { status: 'DRAFT' });
  }

  /** A run's new drafts, in one write: no read shows them until their claims are done. */
  insertDrafts(drafts: PayoutDocument[]): Promise<void> {
    return this.insertAll(drafts, () => []);
  }

  /** Drafts whose claims are done, in one read and one write: each becomes what `finished` holds for it. */
  async finishDrafts(programId: string, finished: Map<string, Partial<PayoutDocument>>): Promise<void> {
    await this.changeEach(programId, [...finished.keys()], (current) => {
      const set = finished.get(current._id);
      // Only a draft is finished: one no longer a draft was finished already (a retry, or the run that took over a stalled one).
      if (!set || current.status !== 'DRAFT') return null;
      return { set, events: () => [] };
    });
  }

  /** A draft none of whose commissions could be claimed: it never existed for anyone. */
  async discardDraft(programId: string, payoutId: string): Promise<void> {
    await this.discard(programId, { _id: payoutId, status: 'DRAFT' });
  }
}

export function toPayout(payout: PayoutDocument): Payout {
  return {
    id: payout._id,
    affiliateId: payout.affiliateId,
    amount: fromMinorUnits(payout.amountMinor, payout.currency),
    currency: payout.currency,
    status: payout.status === 'DRAFT' ? 'PENDING' : payout.status,
    commissions: payout.items.map((item) => ({
      saleId: item.saleId,
      commissionId: item.commissionId,
      amount: fromMinorUnits(item.amountMinor, payout.currency),
    })),
    payee: {
      name: payout.payee.name,
      email: payout.payee.email,
      payoutDetails: shownPayoutDetails(payout.payee.payoutDetails),
    },
    externalReference: payout.externalReference,
    programId: payout.programId,
    createdAt: payout.createdAt.toISOString(),
    updatedAt: payout.updatedAt.toISOString(),
    paidAt: payout.paidAt ? payout.paidAt.toISOString() : null,
  };
}
