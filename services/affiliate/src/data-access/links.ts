import type { AffiliateLink } from '@affiliate/contracts';
import { outboxPlugin, type OutboxFields } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * One document per referral link. Claiming a slug is inserting its document: the unique key makes
 * two simultaneous claims of one slug end with exactly one owner.
 */
export type LinkDocument = {
  _id: string;
  programId: string;
  affiliateId: string;
  /** The slug as the integrator spelled it. */
  link: string;
  /** `<programId>:<slug lower case>`: slugs are unique per program regardless of case. Dropped by a tombstone. */
  linkKey?: string;
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

export const linkKeyOf = (programId: string, slug: string) => `${programId}:${slug.toLowerCase()}`;

const schema = new Schema<LinkDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    link: { type: String, required: true },
    linkKey: { type: String },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ linkKey: 1 }, { unique: true, sparse: true });
schema.index({ programId: 1, affiliateId: 1, createdAt: 1 });
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.plugin(outboxPlugin);

export function linkModel(connection: Connection): Model<LinkDocument> {
  return connection.model<LinkDocument>('Link', schema, 'links');
}

export function toAffiliateLink(link: LinkDocument): AffiliateLink {
  return {
    id: link._id,
    link: link.link,
    userId: link.affiliateId,
    programId: link.programId,
    createdAt: link.createdAt.toISOString(),
    updatedAt: link.updatedAt.toISOString(),
  };
}

/** An affiliate's links, oldest first: the first one is where unattributed referrals and sales count. */
export const OLDEST_FIRST = { createdAt: 1, _id: 1 } as const;
