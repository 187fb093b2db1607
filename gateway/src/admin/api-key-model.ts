import type { ApiScope } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';

export type ApiKeyDocument = {
  _id: string;
  programId: string;
  /** SHA-256 of the key: the key itself is never stored. */
  keyHash: string;
  /** The first characters, so an operator can tell keys apart without seeing them. */
  displayPrefix: string;
  /** What the key may do; absent on keys made before scopes existed, and on keys made without them: every scope. */
  scopes?: ApiScope[];
  revokedAt: Date | null;
  createdAt: Date;
};

const apiKeySchema = new Schema<ApiKeyDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    keyHash: { type: String, required: true, unique: true },
    displayPrefix: { type: String, required: true },
    scopes: { type: [String], default: undefined },
    revokedAt: { type: Date, default: null },
  },
  { collection: 'api_keys', timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
apiKeySchema.index({ programId: 1, createdAt: -1 });

export type ApiKeyModel = Model<ApiKeyDocument>;

export function apiKeyModel(connection: Connection): ApiKeyModel {
  return (connection.models.ApiKey as ApiKeyModel | undefined) ?? connection.model<ApiKeyDocument>('ApiKey', apiKeySchema);
}
