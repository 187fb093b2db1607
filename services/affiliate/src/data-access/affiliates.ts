import type { Affiliate, AffiliateLink, AffiliateStatus } from '@affiliate/contracts';
import { outboxPlugin, type OutboxFields } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

export type AffiliateDocument = {
  _id: string;
  programId: string;
  firstName: string;
  lastName: string;
  email: string;
  /**
   * `<programId>:<email lower case>`. One field rather than a compound index because the database
   * only honours sparse unique indexes on a single field, and a tombstone releases the email by
   * dropping this key.
   */
  emailKey?: string;
  status: AffiliateStatus;
  commissionRate: number;
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

export const emailKeyOf = (programId: string, email: string) => `${programId}:${email.trim().toLowerCase()}`;

const schema = new Schema<AffiliateDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    firstName: { type: String, required: true },
    lastName: { type: String, required: true },
    email: { type: String, required: true },
    emailKey: { type: String },
    status: { type: String, required: true },
    commissionRate: { type: Number, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ emailKey: 1 }, { unique: true, sparse: true });
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.plugin(outboxPlugin);

export function affiliateModel(connection: Connection): Model<AffiliateDocument> {
  return connection.model<AffiliateDocument>('Affiliate', schema, 'affiliates');
}

/** The public shape; codes are the coupon service's, so only affiliate.created names them (as none). */
export function toAffiliate(affiliate: AffiliateDocument, links: AffiliateLink[]): Affiliate {
  return {
    id: affiliate._id,
    firstName: affiliate.firstName,
    lastName: affiliate.lastName,
    email: affiliate.email,
    status: affiliate.status,
    commissionRate: affiliate.commissionRate,
    link: null,
    affiliateLinks: links,
    programId: affiliate.programId,
    commissionPlan: null,
    commissionTier: null,
    signupAnswers: [],
    createdAt: affiliate.createdAt.toISOString(),
    updatedAt: affiliate.updatedAt.toISOString(),
  };
}
