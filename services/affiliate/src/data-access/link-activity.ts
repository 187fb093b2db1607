import { ignoringDuplicateKey, insertEach } from '@affiliate/platform';
import { Schema, type Connection, type FilterQuery, type Model, type UpdateQuery } from 'mongoose';

export type ActivityKind = 'click' | 'referral' | 'sale';

/**
 * Per-link statistics as one document per click, referral and sale instead of counters: the
 * unique (program, kind, source id) key makes a redelivered event a no-op, a deletion removes
 * exactly what its creation added, and GET /links counts and sums.
 */
export type LinkActivityDocument = {
  programId: string;
  kind: ActivityKind;
  /** The click id, referral id or sale id. */
  sourceId: string;
  linkId: string;
  affiliateId: string;
  /** Sale revenue in minor units of `currency` (the name is from when it was always cents); 0 for clicks and referrals. */
  amountCents: number;
  /** The sale's currency; absent on clicks, referrals and sales counted before currencies were kept (read as LEGACY_REVENUE_CURRENCY). */
  currency?: string;
  /** A removed referral or sale stays as a marker, so a late or repeated `*.created` cannot bring it back. */
  removed: boolean;
  /** updatedAt of the source object that was last applied, so an older `sale.updated` never overwrites a newer one. */
  sourceUpdatedAt: Date;
  clickId?: number;
  landingUrl?: string | null;
  /** The page the visitor came from (clicks only). Never the visitor's address, which is not stored at all. */
  referrer?: string | null;
  /** The visitor id sent with the click (clicks only): COOKIE_STUFFING looks at the visitor behind a click. */
  visitorId?: string | null;
  createdAt: Date;
};

const schema = new Schema<LinkActivityDocument>(
  {
    programId: { type: String, required: true },
    kind: { type: String, required: true },
    sourceId: { type: String, required: true },
    linkId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    amountCents: { type: Number, required: true },
    currency: { type: String },
    removed: { type: Boolean, required: true },
    sourceUpdatedAt: { type: Date, required: true },
    clickId: { type: Number },
    landingUrl: { type: String, default: null },
    referrer: { type: String, default: null },
    visitorId: { type: String, default: null },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ programId: 1, kind: 1, sourceId: 1 }, { unique: true });
schema.index({ programId: 1, linkId: 1 });
// One affiliate's activity since a day: its portal's daily charts (activityOfAffiliate).
schema.index({ programId: 1, affiliateId: 1, createdAt: 1 });

const linkActivityModel = (connection: Connection): Model<LinkActivityDocument> =>
  connection.model<LinkActivityDocument>('LinkActivity', schema, 'link_activity');

/** Sales counted before currencies were kept were summed as hundredths whatever their currency: they read as USD. */
export const LEGACY_REVENUE_CURRENCY = 'USD';

type ActivityRow = { _id: { linkId: string; kind: ActivityKind; currency?: string | null }; count: number; cents: number };
export type NewActivity = Omit<LinkActivityDocument, 'programId' | 'kind' | 'sourceId'>;

const DAY_MS = 86_400_000;

/** The clicks, referrals and sales counted on each program's links. */
export class LinkActivityRepository {
  private readonly model: Model<LinkActivityDocument>;

  constructor(context: { connection: Connection }) {
    this.model = linkActivityModel(context.connection);
  }

  /**
   * The clicks of a batch, counted, in one insert. A click whose id a repeat stored first (its
   * claimer looked dead, `recordClick`) is given this click's details instead: the claimer's click
   * is the real one (one more write, for those only).
   */
  async recordClicks(programId: string, clicks: (NewActivity & { clickId: number })[]): Promise<void> {
    const landed = await this.recordClaimedClicks(programId, clicks);
    const stored = clicks.filter((_click, index) => !landed[index]);
    if (stored.length === 0) return;
    await this.model.collection.bulkWrite(
      stored.map(({ clickId, ...details }) => ({
        updateOne: { filter: { programId, kind: 'click', sourceId: String(clickId) }, update: { $set: details } },
      })),
      { ordered: false },
    );
  }

  /**
   * Clicks stored under ids their claims hold, unless stored already (one insert): whether each
   * landed. A claimer still writing gives its own details afterwards (`recordClicks`).
   */
  async recordClaimedClicks(programId: string, clicks: (NewActivity & { clickId: number })[]): Promise<boolean[]> {
    if (clicks.length === 0) return [];
    return insertEach(
      this.model,
      clicks.map((click) => ({ ...click, programId, kind: 'click', sourceId: String(click.clickId) }) as LinkActivityDocument),
    );
  }

  click(programId: string, clickId: number) {
    return this.model.findOne({ programId, kind: 'click', sourceId: String(clickId) }).lean();
  }

  sale(programId: string, saleId: string) {
    return this.model.findOne({ programId, kind: 'sale', sourceId: saleId }).lean();
  }

  /** Counted once however often it arrives; a source already marked removed stays uncounted. */
  async countOnce(programId: string, kind: ActivityKind, sourceId: string, activity: NewActivity): Promise<void> {
    await this.upsert({ programId, kind, sourceId }, { $setOnInsert: activity });
  }

  /**
   * The current amount of a sale. Matches only a live entry no newer than `sourceUpdatedAt`, so a
   * repeated or older event and a removed sale change nothing (their upsert collides and is dropped).
   */
  async setAmount(
    programId: string,
    sourceId: string,
    amount: { amountCents: number; currency: string },
    sourceUpdatedAt: Date,
    whenNew: Pick<NewActivity, 'linkId' | 'affiliateId' | 'createdAt'>,
  ) {
    await this.upsert(
      { programId, kind: 'sale', sourceId, removed: false, sourceUpdatedAt: { $lte: sourceUpdatedAt } },
      { $set: { ...amount, sourceUpdatedAt }, $setOnInsert: whenNew },
    );
  }

  /** The entry stays as a removed marker, so a late or repeated `*.created` cannot bring it back. */
  async markRemoved(programId: string, kind: Exclude<ActivityKind, 'click'>, sourceId: string): Promise<void> {
    const now = new Date();
    await this.upsert(
      { programId, kind, sourceId },
      { $set: { removed: true, amountCents: 0 }, $setOnInsert: { linkId: '', affiliateId: '', sourceUpdatedAt: now, createdAt: now } },
    );
  }

  /** Per link, kind and currency (sales): how many live entries and the sum of their amounts, never across currencies. */
  totals(programId: string, linkIds: string[]) {
    return this.model.aggregate<ActivityRow>([
      { $match: { programId, linkId: { $in: linkIds }, removed: false } },
      { $group: { _id: { linkId: '$linkId', kind: '$kind', currency: '$currency' }, count: { $sum: 1 }, cents: { $sum: '$amountCents' } } },
    ]);
  }

  /**
   * An affiliate's live sales: how many (in every currency), and their revenue in minor units of
   * `currency` only (a scan on the local server; only tiered plans ask).
   */
  async salesOfAffiliate(programId: string, affiliateId: string, currency: string): Promise<{ sales: number; revenueCents: number }> {
    const rows = await this.model.aggregate<{ _id: string | null; count: number; cents: number }>([
      { $match: { programId, affiliateId, kind: 'sale', removed: false } },
      { $group: { _id: '$currency', count: { $sum: 1 }, cents: { $sum: '$amountCents' } } },
    ]);
    const inCurrency = rows.filter((row) => (row._id ?? LEGACY_REVENUE_CURRENCY) === currency);
    return { sales: rows.reduce((sum, row) => sum + row.count, 0), revenueCents: inCurrency.reduce((sum, row) => sum + row.cents, 0) };
  }

  /**
   * One affiliate's live clicks, referrals and sales created since `from`, counted in the database
   * per kind and whole day since `from` (`day` 0 is the day starting at `from`): its portal's daily
   * charts, by the index on programId, affiliateId and createdAt, never the rows themselves.
   */
  activityOfAffiliate(programId: string, affiliateId: string, from: Date) {
    return this.model.aggregate<{ _id: { day: number; kind: ActivityKind }; count: number }>([
      { $match: { programId, affiliateId, createdAt: { $gte: from }, removed: false } },
      {
        $group: { _id: { day: { $floor: { $divide: [{ $subtract: ['$createdAt', from] }, DAY_MS] } }, kind: '$kind' }, count: { $sum: 1 } },
      },
    ]);
  }

  /** Per affiliate and kind, the live entries created in [from, to): the report's clicks and referrals. */
  countsByAffiliate(programId: string, from: Date | undefined, to: Date | undefined) {
    const createdAt = { ...(from ? { $gte: from } : {}), ...(to ? { $lt: to } : {}) };
    return this.model.aggregate<{ _id: { affiliateId: string; kind: ActivityKind }; count: number }>([
      { $match: { programId, removed: false, kind: { $in: ['click', 'referral'] }, ...(from || to ? { createdAt } : {}) } },
      { $group: { _id: { affiliateId: '$affiliateId', kind: '$kind' }, count: { $sum: 1 } } },
    ]);
  }

  private upsert(filter: FilterQuery<LinkActivityDocument>, update: UpdateQuery<LinkActivityDocument>): Promise<void> {
    return ignoringDuplicateKey(this.model.updateOne(filter, update, { upsert: true }));
  }
}
