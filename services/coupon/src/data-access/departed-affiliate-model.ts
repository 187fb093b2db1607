import { Schema, type Connection, type Model } from 'mongoose';

/**
 * Affiliates the affiliate service has deleted. A code assigned at the moment the deletion is
 * handled could miss the unassignment sweep; whoever writes second sees the other's write here.
 */
export type DepartedAffiliateRecord = { _id: string; programId: string; affiliateId: string; departedAt: Date };

const departedAffiliateSchema = new Schema<DepartedAffiliateRecord>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    departedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'departed_affiliates' },
);

export const departedAffiliateId = (programId: string, affiliateId: string): string => `${programId}:${affiliateId}`;

export function departedAffiliateModel(connection: Connection): Model<DepartedAffiliateRecord> {
  return connection.model<DepartedAffiliateRecord>('DepartedAffiliate', departedAffiliateSchema);
}
