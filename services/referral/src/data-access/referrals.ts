import type { Referral } from '@affiliate/contracts';
import { outboxPlugin, type OutboxFields } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

export type ReferralDocument = {
  _id: string;
  programId: string;
  affiliateId: string;
  linkId: string | null;
  clickId: number | null;
  email: string;
  /**
   * `<programId>:<email lower case>`: one referral per (program, email). A single sparse field
   * rather than a compound index, because the database honours sparse uniqueness only on a single
   * field; a tombstone releases the email by dropping this key.
   */
  emailKey?: string;
  name: string | null;
  referredUserExternalId: string | null;
  plan: string | null;
  status: Referral['status'];
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

export const emailKeyOf = (programId: string, email: string): string => `${programId}:${email.trim().toLowerCase()}`;

const schema = new Schema<ReferralDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    linkId: { type: String, default: null },
    clickId: { type: Number, default: null },
    email: { type: String, required: true },
    emailKey: { type: String },
    name: { type: String, default: null },
    referredUserExternalId: { type: String, default: null },
    plan: { type: String, default: null },
    status: { type: String, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ emailKey: 1 }, { unique: true, sparse: true });
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, affiliateId: 1, createdAt: -1 });
schema.index({ programId: 1, referredUserExternalId: 1, createdAt: -1 });
schema.plugin(outboxPlugin);

export function referralModel(connection: Connection): Model<ReferralDocument> {
  return connection.model<ReferralDocument>('Referral', schema, 'referrals');
}

export function toReferral(referral: ReferralDocument): Referral {
  return {
    id: referral._id,
    affiliateId: referral.affiliateId,
    linkId: referral.linkId,
    clickId: referral.clickId,
    email: referral.email,
    name: referral.name,
    referredUserExternalId: referral.referredUserExternalId,
    plan: referral.plan,
    status: referral.status,
    programId: referral.programId,
    createdAt: referral.createdAt.toISOString(),
    updatedAt: referral.updatedAt.toISOString(),
  };
}
