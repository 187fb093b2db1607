import { Schema, type Connection, type Model } from 'mongoose';

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
  /** Sale revenue in cents; 0 for clicks and referrals. */
  amountCents: number;
  /** A removed referral or sale stays as a marker, so a late or repeated `*.created` cannot bring it back. */
  removed: boolean;
  /** updatedAt of the source object that was last applied, so an older `sale.updated` never overwrites a newer one. */
  sourceUpdatedAt: Date;
  clickId?: number;
  landingUrl?: string | null;
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
    removed: { type: Boolean, required: true },
    sourceUpdatedAt: { type: Date, required: true },
    clickId: { type: Number },
    landingUrl: { type: String, default: null },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ programId: 1, kind: 1, sourceId: 1 }, { unique: true });
schema.index({ programId: 1, linkId: 1 });

export function linkActivityModel(connection: Connection): Model<LinkActivityDocument> {
  return connection.model<LinkActivityDocument>('LinkActivity', schema, 'link_activity');
}
