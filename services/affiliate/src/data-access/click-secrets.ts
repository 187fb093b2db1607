import { randomBytes } from 'node:crypto';
import { insertOnce } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/** The key under which a program's visitors without a visitor id are identified (HMAC of address and user agent). */
export type ClickSecretDocument = { _id: string; secret: string; createdAt: Date };

const schema = new Schema<ClickSecretDocument>(
  { _id: { type: String, required: true }, secret: { type: String, required: true }, createdAt: { type: Date, required: true } },
  { versionKey: false },
);

const clickSecretModel = (connection: Connection): Model<ClickSecretDocument> =>
  connection.model<ClickSecretDocument>('ClickSecret', schema, 'click_secrets');

/**
 * One random secret per program, made at its first anonymous click and never changed (a new one
 * would make every visitor look new). Kept in memory once read: it is immutable.
 */
export class ClickSecretRepository {
  private readonly model: Model<ClickSecretDocument>;
  private readonly known = new Map<string, Buffer>();

  constructor(context: { connection: Connection }) {
    this.model = clickSecretModel(context.connection);
  }

  async secretOf(programId: string): Promise<Buffer> {
    const cached = this.known.get(programId);
    if (cached) return cached;
    // Two first clicks may race to create it: the insert lets one in, and both read the survivor.
    await insertOnce(this.model, { _id: programId, secret: randomBytes(32).toString('base64'), createdAt: new Date() });
    const stored = await this.model.collection.findOne({ _id: programId as never });
    if (!stored) throw new Error(`the click secret of program ${programId} vanished after its insert`);
    const secret = Buffer.from(String(stored.secret), 'base64');
    this.known.set(programId, secret);
    return secret;
  }
}
