import { Schema, type Connection, type Model } from 'mongoose';
import { byIdInProgram, insertOnce } from './aggregate-store';

/**
 * The first affiliate each customer of a program was credited to, by a key naming the customer (a
 * normalized email, an external id, a customerId): what CUSTOMER_OF_ANOTHER_AFFILIATE compares a new
 * referral or sale with. Keyed by `<program>:<customer key>`, so the check is a point lookup on the
 * hot path (DESIGN.md section 8), and the first claim stays, a concurrent one included.
 */
type CustomerClaimDocument = { _id: string; programId: string; affiliateId: string; source: string; at: Date };

const schema = new Schema<CustomerClaimDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    source: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false },
);

const keyOf = (programId: string, customerKey: string) => `${programId}:${customerKey}`;

export type CustomerClaim = { customerKey: string; affiliateId: string; source: string };

export class CustomerClaims {
  private readonly model: Model<CustomerClaimDocument>;

  constructor(context: { connection: Connection }) {
    this.model =
      (context.connection.models.CustomerClaim as Model<CustomerClaimDocument> | undefined) ??
      context.connection.model<CustomerClaimDocument>('CustomerClaim', schema, 'customer_claims');
  }

  /** The first of the customer keys already claimed by an affiliate other than this one, or null. */
  async claimedByAnother(programId: string, affiliateId: string, customerKeys: string[]): Promise<CustomerClaim | null> {
    const claims = await Promise.all(
      customerKeys.map((customerKey) => byIdInProgram(this.model, programId, keyOf(programId, customerKey))),
    );
    const index = claims.findIndex((claim) => claim !== null && claim.affiliateId !== affiliateId);
    const claim = claims[index];
    return claim ? { customerKey: customerKeys[index] ?? '', affiliateId: claim.affiliateId, source: claim.source } : null;
  }

  /** Claims each key not claimed yet for the affiliate; a key claimed already stays its first affiliate's. */
  async claim(programId: string, affiliateId: string, customerKeys: string[], source: string): Promise<void> {
    const at = new Date();
    await Promise.all(
      customerKeys.map((customerKey) => insertOnce(this.model, { _id: keyOf(programId, customerKey), programId, affiliateId, source, at })),
    );
  }
}
