import type { Sale } from '@affiliate/contracts';
import { AggregateStore, fromMinorUnits, outboxPlugin, programKey, type OutboxFields, type PageRequest, type StoreContext } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

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
  /** The key the coupon service counted this sale's redemption under (promo-code sales only). */
  redemptionKey: string | null;
  customerId: string | null;
  /** Money in integer minor units of `currency` (platform money module); the API shows decimals. */
  totalEarnedMinor: number;
  currency: string;
  commissionRate: number;
  commissionEarnedMinor: number;
  paymentTrigger: string;
  commissions: Commission[];
  /** Set by DELETE /sales: the sale is reversed, out of every read, but its externalId stays taken. */
  reversedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

type Commission = Omit<Sale['commissions'][number], 'amount'> & { amountMinor: number };

export const externalIdKeyOf = (programId: string, externalId: string): string => programKey(programId, externalId);

export type SaleFilters = { affiliateId?: string; referralId?: string };

const commissionSchema = new Schema<Commission>(
  {
    id: { type: String, required: true },
    affiliateId: { type: String, required: true },
    amountMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    payoutCreated: { type: Boolean, required: true },
    payoutId: { type: String, default: null },
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
    redemptionKey: { type: String, default: null },
    customerId: { type: String, default: null },
    totalEarnedMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    commissionRate: { type: Number, required: true },
    commissionEarnedMinor: { type: Number, required: true },
    paymentTrigger: { type: String, required: true },
    commissions: { type: [commissionSchema], default: [] },
    reversedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ externalIdKey: 1 }, { unique: true, sparse: true });
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, affiliateId: 1, createdAt: -1 });
schema.index({ programId: 1, referralId: 1, createdAt: -1 });
schema.plugin(outboxPlugin);

const saleModel = (connection: Connection): Model<SaleDocument> => connection.model<SaleDocument>('Sale', schema, 'sales');

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

  /** Sales matching every filter given (none: the whole program), newest first. */
  list(programId: string, filters: SaleFilters, page: PageRequest) {
    const filter = Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined));
    return this.page(programId, filter, page);
  }
}

export function toSale(sale: SaleDocument): Sale {
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
    commissionEarned: fromMinorUnits(sale.commissionEarnedMinor, sale.currency),
    paymentTrigger: sale.paymentTrigger,
    commissions: sale.commissions.map((commission) => ({
      id: commission.id,
      affiliateId: commission.affiliateId,
      amount: fromMinorUnits(commission.amountMinor, commission.currency),
      currency: commission.currency,
      payoutCreated: commission.payoutCreated,
      payoutId: commission.payoutId ?? null,
    })),
    programId: sale.programId,
    createdAt: sale.createdAt.toISOString(),
    updatedAt: sale.updatedAt.toISOString(),
  };
}
