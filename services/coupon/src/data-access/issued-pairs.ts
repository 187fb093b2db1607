import type { StoreContext } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

type IssuedPairDocument = { _id: string; programId: string; couponId: string; affiliateId: string; issuedAt: Date };

const schema = new Schema<IssuedPairDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    couponId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    issuedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'issued_code_pairs' },
);

const issuedPairModel = (connection: Connection): Model<IssuedPairDocument> =>
  (connection.models.IssuedCodePair as Model<IssuedPairDocument> | undefined) ??
  connection.model<IssuedPairDocument>('IssuedCodePair', schema);

/**
 * Every (coupon, affiliate) pair a generated code was ever issued to, kept for good (README, "Sign-up
 * and approval": a deleted code is not issued again). Not the code itself: the outbox relay removes a
 * deleted code's record once promocode.deleted is out, and then nothing else remembers the pair.
 * The _id is the pair's key (issuedCodeId: program, coupon and affiliate), so it is unique per pair.
 */
export class IssuedPairRepository {
  private readonly model: Model<IssuedPairDocument>;

  constructor(context: StoreContext) {
    this.model = issuedPairModel(context.connection);
  }

  /** Whether this program ever issued this pair; the program is part of the query, never only the key. */
  async wasIssued(programId: string, pairId: string): Promise<boolean> {
    return (await this.model.collection.countDocuments({ _id: pairId as never, programId }, { limit: 1 })) > 0;
  }

  /** Remembers the pair (again is a no-op). */
  async record(programId: string, pairId: string, couponId: string, affiliateId: string): Promise<void> {
    await this.model.collection.updateOne(
      { _id: pairId as never, programId },
      { $setOnInsert: { couponId, affiliateId, issuedAt: new Date() } },
      { upsert: true },
    );
  }
}
