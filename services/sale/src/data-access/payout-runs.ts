import { randomUUID } from 'node:crypto';
import { unlessKeyTaken, UniqueKeyConflict } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * One payout run per program at a time: a lease document per program, extended as the run goes. A
 * run that dies keeps the lease until it expires; the next run then takes it over and finishes the
 * dead run's drafts.
 */
type PayoutRunDocument = { _id: string; token: string; expiresAt: Date };

const schema = new Schema<PayoutRunDocument>(
  { _id: { type: String, required: true }, token: { type: String, required: true }, expiresAt: { type: Date, required: true } },
  { versionKey: false },
);
const payoutRunModel = (connection: Connection): Model<PayoutRunDocument> =>
  connection.model<PayoutRunDocument>('PayoutRun', schema, 'payout_runs');

export class PayoutRunLeases {
  private readonly model: Model<PayoutRunDocument>;

  constructor(context: { connection: Connection }) {
    this.model = payoutRunModel(context.connection);
  }

  /** The lease's token, or null while another run holds it. */
  async take(programId: string, leaseMs: number): Promise<string | null> {
    const token = randomUUID();
    const expiresAt = new Date(Date.now() + leaseMs);
    const inserted = await unlessKeyTaken(() => this.model.collection.insertOne({ _id: programId, token, expiresAt } as never));
    if (!(inserted instanceof UniqueKeyConflict)) return token;
    await this.model.updateOne({ _id: programId, expiresAt: { $lt: new Date() } }, { $set: { token, expiresAt } });
    // Whose lease it is, read back by _id: the answer of a conditional update is not trusted for identity (DESIGN.md section 8).
    const holder = await this.model.findOne({ _id: programId }).lean();
    return holder?.token === token ? token : null;
  }

  /** Extends the lease of the run holding `token`; false when it is no longer that run's (it expired and another took it). */
  async extend(programId: string, token: string, leaseMs: number): Promise<boolean> {
    const written = await this.model.updateOne({ _id: programId, token }, { $set: { expiresAt: new Date(Date.now() + leaseMs) } });
    return written.matchedCount === 1;
  }

  async release(programId: string, token: string): Promise<void> {
    await this.model.deleteOne({ _id: programId, token });
  }
}
