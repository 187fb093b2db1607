import { Schema, type Connection, type Model, type Types } from 'mongoose';

export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

export type StoredResponse = { status: number; headers: Record<string, string | string[]>; body: Buffer };

export type IdempotencyRecordDocument = {
  _id: Types.ObjectId;
  programId: string;
  key: string;
  /** SHA-256 of method, path with query, and the body by meaning (requestFingerprint): the same key with another request is a 409. */
  requestHash: string;
  state: 'processing' | 'completed';
  response: StoredResponse | null;
  createdAt: Date;
};

const idempotencyRecordSchema = new Schema<IdempotencyRecordDocument>(
  {
    programId: { type: String, required: true },
    key: { type: String, required: true },
    requestHash: { type: String, required: true },
    state: { type: String, enum: ['processing', 'completed'], required: true },
    response: {
      type: new Schema({ status: Number, headers: Schema.Types.Mixed, body: Buffer }, { _id: false, minimize: false }),
      default: null,
    },
    createdAt: { type: Date, required: true },
  },
  { collection: 'idempotency_keys', versionKey: false, minimize: false },
);
idempotencyRecordSchema.index({ programId: 1, key: 1 }, { unique: true });
// Servers that honour TTL indexes clean up by themselves; the claim logic ignores expired records either way.
idempotencyRecordSchema.index({ createdAt: 1 }, { expireAfterSeconds: IDEMPOTENCY_WINDOW_SECONDS });

export type IdempotencyRecordModel = Model<IdempotencyRecordDocument>;

export function idempotencyRecordModel(connection: Connection): IdempotencyRecordModel {
  return (
    (connection.models.IdempotencyRecord as IdempotencyRecordModel | undefined) ??
    connection.model<IdempotencyRecordDocument>('IdempotencyRecord', idempotencyRecordSchema)
  );
}
