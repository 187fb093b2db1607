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

const departedAffiliateId = (programId: string, affiliateId: string): string => `${programId}:${affiliateId}`;

const departedAffiliateModel = (connection: Connection): Model<DepartedAffiliateRecord> =>
  connection.model<DepartedAffiliateRecord>('DepartedAffiliate', departedAffiliateSchema);

export class DepartedAffiliateRepository {
  private readonly model: Model<DepartedAffiliateRecord>;

  constructor(context: { connection: Connection }) {
    this.model = departedAffiliateModel(context.connection);
  }

  async record(programId: string, affiliateId: string): Promise<void> {
    await this.model.updateOne(
      { _id: departedAffiliateId(programId, affiliateId) },
      { $setOnInsert: { programId, affiliateId, departedAt: new Date() } },
      { upsert: true },
    );
  }

  async has(programId: string, affiliateId: string): Promise<boolean> {
    return (await this.model.exists({ _id: departedAffiliateId(programId, affiliateId) })) !== null;
  }
}
