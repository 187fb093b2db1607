import { NO_RISK, type AttributionReason, type CommissionStatus, type Risk, type Sale } from '@affiliate/contracts';
import {
  AggregateStore,
  fromMinorUnits,
  outboxPlugin,
  programKey,
  utcDayOf,
  withinPeriod,
  type Decide,
  type OutboxFields,
  type PageRequest,
  type Period,
  type StoreContext,
} from '@affiliate/platform';
import { Schema, type Connection, type FilterQuery, type Model } from 'mongoose';
import { availableAtOf, statusOf, type CommissionEntry } from '../domain/commission';

export type SaleDocument = {
  _id: string;
  programId: string;
  affiliateId: string;
  referralId: string | null;
  promotionalCodeId: string | null;
  couponId: string | null;
  promoCode: string | null;
  linkId: string | null;
  externalId: string | null;
  /**
   * `<programId>:<externalId>`, absent without an externalId: the payment is recorded once per
   * program. A single sparse field, because the database honours sparse uniqueness only on a single
   * field. It stays after a reversal, so a late retry of a refunded payment cannot record it again.
   */
  externalIdKey?: string;
  /**
   * With an externalId: what the first request said (amount, currency, attribution), so a repeat
   * with other content is told apart from a retry. Absent on sales stored before it was kept.
   */
  requestContent?: string;
  /** The key the coupon service counted this sale's redemption under (promo-code sales only). */
  redemptionKey: string | null;
  customerId: string | null;
  /** Money in integer minor units of `currency` (platform money module); the API shows decimals. */
  totalEarnedMinor: number;
  currency: string;
  /** The percentage applied; null for a flat commission, or none (a recurring payment the plan does not pay). */
  commissionRate: number | null;
  commissionEarnedMinor: number;
  /** The plan in force at the sale; null when the affiliate earned its own commissionRate. */
  commissionPlanId?: string | null;
  paymentTrigger: string;
  /** When the payment was made; absent on sales stored before it existed (then their createdAt). */
  paidAt?: Date;
  commissions: CommissionEntry[];
  /** How the sale was attributed; absent on sales stored before it was recorded. */
  attribution?: AttributionReason | null;
  /** The risk signals found when it was recorded; absent on sales stored before they were looked for. */
  risk?: Risk;
  /** Set by DELETE /sales: the sale is reversed, out of every read, but its externalId stays taken. */
  reversedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

// The commission entry and its rules live in domain/commission.ts; re-exported for the readers here.
export { availableAtOf, isDue, stateOf, statusOf, type CommissionEntry, type CommissionState } from '../domain/commission';

/** What a payout run reads of a sale. */
export type SaleWithCommissions = Pick<SaleDocument, '_id' | 'createdAt' | 'commissions'>;
/** What a statement reads of a sale. */
export type SaleForStatement = Pick<SaleDocument, '_id' | 'createdAt' | 'updatedAt' | 'reversedAt' | 'commissions'>;
/** What the report reads of a sale. */
export type SaleForReport = Pick<
  SaleDocument,
  '_id' | 'affiliateId' | 'totalEarnedMinor' | 'currency' | 'commissions' | 'createdAt' | 'reversedAt'
>;

export const externalIdKeyOf = (programId: string, externalId: string): string => programKey(programId, externalId);

export type SaleFilters = { affiliateId?: string; referralId?: string; currency?: string; createdAt?: Period; paidAt?: Period };
/** What GET /commissions filters by: one commission entry must match status, affiliate and currency; the periods are its sale's createdAt and paidAt. */
export type CommissionFilters = { status?: CommissionStatus; affiliateId?: string; currency?: string; createdAt?: Period; paidAt?: Period };
/** What a sales CSV row names. */
export type SaleRow = Pick<
  SaleDocument,
  | '_id'
  | 'affiliateId'
  | 'referralId'
  | 'promoCode'
  | 'externalId'
  | 'customerId'
  | 'totalEarnedMinor'
  | 'currency'
  | 'commissionEarnedMinor'
  | 'commissions'
  | 'paymentTrigger'
  | 'paidAt'
  | 'createdAt'
>;
/** What a commissions CSV row reads of its sale. */
export type SaleCommissions = Pick<SaleDocument, '_id' | 'createdAt' | 'commissions'>;

const commissionSchema = new Schema<CommissionEntry>(
  {
    id: { type: String, required: true },
    affiliateId: { type: String, required: true },
    amountMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    state: { type: String },
    availableAt: { type: Date },
    commissionPlanId: { type: String, default: null },
    adjusts: { type: String, default: null },
    payoutCreated: { type: Boolean, required: true },
    payoutId: { type: String, default: null },
    decisions: { type: Schema.Types.Mixed },
    amountChanges: { type: Schema.Types.Mixed },
    paidOutByHandAt: { type: Date },
  },
  { _id: false },
);

const schema = new Schema<SaleDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    referralId: { type: String, default: null },
    promotionalCodeId: { type: String, default: null },
    couponId: { type: String, default: null },
    promoCode: { type: String, default: null },
    linkId: { type: String, default: null },
    externalId: { type: String, default: null },
    externalIdKey: { type: String },
    requestContent: { type: String },
    redemptionKey: { type: String, default: null },
    customerId: { type: String, default: null },
    totalEarnedMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    commissionRate: { type: Number, default: null },
    commissionEarnedMinor: { type: Number, required: true },
    commissionPlanId: { type: String, default: null },
    paymentTrigger: { type: String, required: true },
    paidAt: { type: Date },
    commissions: { type: [commissionSchema], default: [] },
    attribution: { type: Schema.Types.Mixed, default: null },
    risk: { type: Schema.Types.Mixed },
    reversedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// Which index serves which filter of GET /sales and GET /commissions (each with the program first and,
// but for paidAt, ending in the lists' order, createdAt then _id, so a page is read in order and stops
// at its limit; a createdAt period is a range on the createdAt that follows): none or createdAt alone,
// the list's order; affiliateId, referralId and currency, their own (given together, the first of
// them, the others filtering what it reads); a paidAt period alone, its own: a range of the period's
// sales, then sorted into the list's order (bounded by the period, docs/lists-and-exports.md); the
// commissions' status (HELD, the review queue), affiliate and currency, the multikey ones on the
// entries (given together, one of them, the others filtering what it reads); a paidAt period of
// GET /commissions, as on GET /sales. id and the externalId are point lookups.
schema.index({ externalIdKey: 1 }, { unique: true, sparse: true });
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, affiliateId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, referralId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, currency: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, paidAt: -1 });
schema.index({ programId: 1, 'commissions.payoutCreated': 1 });
schema.index({ programId: 1, 'commissions.state': 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, 'commissions.affiliateId': 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, 'commissions.currency': 1, createdAt: -1, _id: -1 });
schema.plugin(outboxPlugin);

/** Exported for the memory test, which seeds sales through it instead of 50,000 API calls. */
export const saleModel = (connection: Connection): Model<SaleDocument> => connection.model<SaleDocument>('Sale', schema, 'sales');

/**
 * The sales of each program. Every read sees the sales that are not reversed; only the lookup by
 * externalId also finds a reversed one, because a reversed payment cannot be recorded again.
 */
export class SaleRepository extends AggregateStore<SaleDocument> {
  constructor(context: StoreContext) {
    super(context, saleModel, { liveWhenNull: ['reversedAt'] });
  }

  /** The sale recorded for this payment, reversed or not. */
  byExternalId(programId: string, externalId: string) {
    return this.byKey(programId, 'externalIdKey', externalIdKeyOf(programId, externalId), { evenIfNotLive: true });
  }

  /**
   * A change that also reaches a reversed sale: its commissions are still paid out, voided or
   * taken back after the reversal.
   */
  changeEvenIfReversed(programId: string, saleId: string, decide: Decide<SaleDocument>) {
    return this.changeGuarded(programId, saleId, {}, decide, { evenIfNotLive: true });
  }

  /** `changeEvenIfReversed` of many sales in one read and one write (a payout run's claims): AggregateStore.changeEach. */
  changeEachEvenIfReversed(programId: string, saleIds: readonly string[], decide: Decide<SaleDocument>) {
    return this.changeEach(programId, saleIds, decide, { evenIfNotLive: true });
  }

  /**
   * The sales, reversed ones too, with a commission in no payout, oldest first: what a payout run
   * looks through. Streamed through a cursor with only the fields a run needs, so a run holds one
   * batch of sales at a time, not every sale with an unpaid commission. A list query (a scan on the
   * local server; on MongoDB the multikey index serves it).
   */
  async *withCommissionsOutsidePayouts(programId: string, affiliateId: string | undefined): AsyncGenerator<SaleWithCommissions> {
    const unpaid = { ...(affiliateId ? { affiliateId } : {}), 'commissions.payoutCreated': false };
    yield* this.stream(programId, unpaid, ['_id', 'createdAt', 'commissions'], { sort: { createdAt: 1, _id: 1 }, evenIfNotLive: true });
  }

  /** Every sale of the affiliate, reversed ones too, one batch at a time: what a statement adds up from the first. */
  ofAffiliate(programId: string, affiliateId: string): AsyncGenerator<SaleForStatement> {
    return this.stream(programId, { affiliateId }, ['_id', 'createdAt', 'updatedAt', 'reversedAt', 'commissions'], {
      sort: { createdAt: 1, _id: 1 },
      evenIfNotLive: true,
    });
  }

  /**
   * One affiliate's commissions summed per currency in the database (one aggregation, whatever their
   * number; reversed sales too, as a statement reads them), in minor units: earned (all but VOID,
   * adjustments negative), pending (PENDING and HELD), due, paid; `owed` is what they add to the
   * statement's balance (an adjustment always, another only while OPEN or PAID), and `paidByHand` what
   * PUT /sales marked paid outside the payout runs (the statement's PAID_OUT of those).
   */
  balancesOfAffiliate(programId: string, affiliateId: string, now: Date) {
    const when = (condition: unknown) => ({ $sum: { $cond: [condition, '$amount', 0] } });
    return this.model.aggregate<{
      _id: string;
      earned: number;
      pending: number;
      due: number;
      paid: number;
      owed: number;
      paidByHand: number;
    }>([
      { $match: { programId, affiliateId } },
      { $unwind: '$commissions' },
      { $match: { 'commissions.affiliateId': affiliateId } },
      {
        $project: {
          currency: '$commissions.currency',
          amount: '$commissions.amountMinor',
          state: { $ifNull: ['$commissions.state', 'OPEN'] },
          adjustment: { $ne: [{ $ifNull: ['$commissions.adjusts', null] }, null] },
          available: { $not: [{ $gt: [{ $ifNull: ['$commissions.availableAt', '$createdAt'] }, now] }] },
          byHand: {
            $and: [{ $ne: [{ $ifNull: ['$commissions.paidOutByHandAt', null] }, null] }, { $eq: ['$commissions.payoutCreated', true] }],
          },
        },
      },
      {
        $group: {
          _id: '$currency',
          earned: when({ $ne: ['$state', 'VOID'] }),
          pending: when({ $or: [{ $eq: ['$state', 'HELD'] }, { $and: [{ $eq: ['$state', 'OPEN'] }, { $not: ['$available'] }] }] }),
          due: when({ $and: [{ $eq: ['$state', 'OPEN'] }, '$available'] }),
          paid: when({ $eq: ['$state', 'PAID'] }),
          owed: when({ $or: ['$adjustment', { $eq: ['$state', 'OPEN'] }, { $eq: ['$state', 'PAID'] }] }),
          paidByHand: when('$byHand'),
        },
      },
    ]);
  }

  /**
   * The sales recorded in [from, to), reversed ones too (a reversed sale keeps a paid commission and
   * its negative adjustment, which the statement and the next payout count), one batch at a time,
   * with what the report adds up.
   */
  recordedBetween(programId: string, from: Date, to: Date): AsyncGenerator<SaleForReport> {
    const fields: (keyof SaleForReport)[] = [
      '_id',
      'affiliateId',
      'totalEarnedMinor',
      'currency',
      'commissions',
      'createdAt',
      'reversedAt',
    ];
    return this.stream(programId, { createdAt: { $gte: from, $lt: to } }, fields, { evenIfNotLive: true });
  }

  /**
   * The overview's sales (GET /reports/summary), summed by the database per currency and UTC day,
   * never read here one by one: the live sales paid in [from, to) (by createdAt when stored before
   * paidAt was kept), their count and revenue in the sale's currency, and their commissions, all but
   * VOID ones, each in its own currency (a FLAT plan's may differ from its sale's), in minor units.
   */
  async summaryOf(programId: string, period: { from: Date; to: Date }) {
    const within = { $gte: period.from, $lt: period.to };
    const paid = { $match: { programId, reversedAt: null, $or: [{ paidAt: within }, { paidAt: null, createdAt: within }] } };
    const day = utcDayOf({ $ifNull: ['$paidAt', '$createdAt'] });
    const [sales, commissions] = await Promise.all([
      this.model.aggregate<{ _id: { currency: string; day: string }; sales: number; revenue: number }>([
        paid,
        { $group: { _id: { currency: '$currency', day }, sales: { $sum: 1 }, revenue: { $sum: '$totalEarnedMinor' } } },
      ]),
      this.model.aggregate<{ _id: { currency: string; day: string }; commission: number }>([
        paid,
        { $unwind: '$commissions' },
        { $match: { 'commissions.state': { $ne: 'VOID' } } },
        { $group: { _id: { currency: '$commissions.currency', day }, commission: { $sum: '$commissions.amountMinor' } } },
      ]),
    ]);
    return { sales, commissions };
  }

  /**
   * Sales with a commission of the affiliate and status asked for (one entry matching both, by
   * `$elemMatch`), newest first: the page GET /commissions lists the matching commissions of, so a
   * page is never empty while a next one has some. PENDING and DUE are the open state before and
   * after `availableAt` (an entry stored before it existed is open and available since its sale:
   * DUE). Reversed sales are listed too: their commissions are VOID (or PAID, with the adjustment
   * that takes it back), which is where a user looks for them.
   */
  withCommissions(programId: string, filters: CommissionFilters, page: PageRequest, now = new Date()) {
    return this.page(programId, commissionFilter(filters, now), page, { evenIfNotLive: true });
  }

  /** `withCommissions` whole, one batch at a time through a cursor, with what a commission row reads: a CSV export. */
  commissionsToExport(programId: string, filters: CommissionFilters, now: Date): AsyncGenerator<SaleCommissions> {
    return this.stream(programId, commissionFilter(filters, now), ['_id', 'createdAt', 'commissions'], {
      sort: { createdAt: -1, _id: -1 },
      evenIfNotLive: true,
    });
  }

  /** Sales matching every filter given (none: the whole program), newest first. */
  list(programId: string, filters: SaleFilters, page: PageRequest) {
    return this.page(programId, saleFilter(filters), page);
  }

  /** Every sale the filters let through, newest first, one batch at a time through a cursor: a CSV export. */
  exportRows(programId: string, filters: SaleFilters): AsyncGenerator<SaleRow> {
    const fields: (keyof SaleRow)[] = [
      '_id',
      'affiliateId',
      'referralId',
      'promoCode',
      'externalId',
      'customerId',
      'totalEarnedMinor',
      'currency',
      'commissionEarnedMinor',
      'commissions',
      'paymentTrigger',
      'paidAt',
      'createdAt',
    ];
    return this.stream(programId, saleFilter(filters), fields, { sort: { createdAt: -1, _id: -1 } });
  }
}

function saleFilter(filters: SaleFilters): FilterQuery<SaleDocument> {
  const filter: FilterQuery<SaleDocument> = {};
  if (filters.affiliateId !== undefined) filter.affiliateId = filters.affiliateId;
  if (filters.referralId !== undefined) filter.referralId = filters.referralId;
  if (filters.currency !== undefined) filter.currency = filters.currency;
  if (filters.createdAt !== undefined) filter.createdAt = withinPeriod(filters.createdAt);
  // Sales stored before paidAt was kept have none: a paidAt period leaves them out (their createdAt is their payment's time).
  if (filters.paidAt !== undefined) filter.paidAt = withinPeriod(filters.paidAt);
  return filter;
}

/**
 * Sales with a commission entry matching status, affiliate and currency together (`$elemMatch`):
 * PENDING and DUE are the open state before and after `availableAt` (an entry stored before it
 * existed is open and available since its sale: DUE).
 */
function commissionFilter(filters: CommissionFilters, now: Date): FilterQuery<SaleDocument> {
  const open = { $in: ['OPEN', null] };
  const byStatus: Record<CommissionStatus, Record<string, unknown>> = {
    PENDING: { state: open, availableAt: { $gt: now } },
    DUE: { state: open, availableAt: { $not: { $gt: now } } },
    HELD: { state: 'HELD' },
    PAID: { state: 'PAID' },
    VOID: { state: 'VOID' },
  };
  const entry = {
    ...(filters.affiliateId === undefined ? {} : { affiliateId: filters.affiliateId }),
    ...(filters.currency === undefined ? {} : { currency: filters.currency }),
    ...(filters.status === undefined ? {} : byStatus[filters.status]),
  };
  return {
    ...(Object.keys(entry).length === 0 ? {} : { commissions: { $elemMatch: entry } }),
    ...(filters.createdAt === undefined ? {} : { createdAt: withinPeriod(filters.createdAt) }),
    ...(filters.paidAt === undefined ? {} : { paidAt: withinPeriod(filters.paidAt) }),
  };
}

export function toSale(sale: SaleDocument, now = new Date()): Sale {
  return {
    id: sale._id,
    affiliateId: sale.affiliateId,
    referralId: sale.referralId,
    promotionalCodeId: sale.promotionalCodeId,
    couponId: sale.couponId,
    promoCode: sale.promoCode,
    linkId: sale.linkId,
    externalId: sale.externalId,
    customerId: sale.customerId,
    totalEarned: fromMinorUnits(sale.totalEarnedMinor, sale.currency),
    currency: sale.currency,
    commissionRate: sale.commissionRate,
    commissionEarned: fromMinorUnits(sale.commissionEarnedMinor, sale.commissions[0]?.currency ?? sale.currency),
    commissionPlanId: sale.commissionPlanId ?? null,
    paymentTrigger: sale.paymentTrigger,
    paidAt: (sale.paidAt ?? sale.createdAt).toISOString(),
    commissions: sale.commissions.map((commission) => ({
      id: commission.id,
      affiliateId: commission.affiliateId,
      amount: fromMinorUnits(commission.amountMinor, commission.currency),
      currency: commission.currency,
      status: statusOf(commission, sale, now),
      availableAt: availableAtOf(commission, sale).toISOString(),
      commissionPlanId: commission.commissionPlanId ?? null,
      adjusts: commission.adjusts ?? null,
      payoutCreated: commission.payoutCreated,
      payoutId: commission.payoutId ?? null,
      // Only once a decision was taken: a commission nobody decided on keeps the shape it always had.
      ...(commission.decisions?.length
        ? { decisions: commission.decisions.map((decision) => ({ ...decision, at: new Date(decision.at).toISOString() })) }
        : {}),
    })),
    attribution: sale.attribution ?? null,
    risk: sale.risk ?? NO_RISK,
    programId: sale.programId,
    createdAt: sale.createdAt.toISOString(),
    updatedAt: sale.updatedAt.toISOString(),
  };
}
