import { randomBytes, randomUUID } from 'node:crypto';
import type { PublishableKey } from '@affiliate/contracts';
import { badRequest, notFound } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';
import { hashApiKey } from './api-keys';
import { findLiveProgram } from './programs';
import type { ProgramRepository } from './program-model';

/** Publishable keys say what they are, so that nobody mistakes one for a secret (or the other way round). */
export const PUBLISHABLE_KEY_PREFIX = 'pk_live_';

/**
 * A publishable key is public by design (it sits in a shop's pages), so it is stored and shown in
 * full, as Stripe shows its publishable keys; it is looked up by its hash like an API key. Its own
 * collection: a lookup of a secret key can never find a publishable one, nor the other way round.
 */
export type PublishableKeyDocument = {
  _id: string;
  programId: string;
  key: string;
  keyHash: string;
  revokedAt: Date | null;
  createdAt: Date;
};

const schema = new Schema<PublishableKeyDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    key: { type: String, required: true },
    keyHash: { type: String, required: true, unique: true },
    revokedAt: { type: Date, default: null },
  },
  { collection: 'publishable_keys', timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
schema.index({ programId: 1, createdAt: -1 });

export type PublishableKeyModel = Model<PublishableKeyDocument>;

export function publishableKeyModel(connection: Connection): PublishableKeyModel {
  return (
    (connection.models.PublishableKey as PublishableKeyModel | undefined) ??
    connection.model<PublishableKeyDocument>('PublishableKey', schema)
  );
}

export type PublishableKeyStore = { programs: ProgramRepository; publishableKeys: PublishableKeyModel };

export function isPublishableKey(presented: string): boolean {
  return presented.startsWith('pk_');
}

/** Enough for a key per site and a rotation; a program has no use for more, and each one is a lookup entry. */
export const MAX_ACTIVE_PUBLISHABLE_KEYS = 10;

export async function createPublishableKey(store: PublishableKeyStore, programId: string): Promise<PublishableKey> {
  if (!(await findLiveProgram(store.programs, programId))) throw notFound(`No program with id ${programId}`);
  const active = await store.publishableKeys.countDocuments({ programId, revokedAt: null });
  if (active >= MAX_ACTIVE_PUBLISHABLE_KEYS) {
    throw badRequest(
      `A program can have at most ${MAX_ACTIVE_PUBLISHABLE_KEYS} active publishable keys: revoke one before creating another`,
      'limit_reached',
    );
  }
  const key = `${PUBLISHABLE_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  const created = await store.publishableKeys.create({ _id: randomUUID(), programId, key, keyHash: hashApiKey(key) });
  return toPublishableKey(created.toObject());
}

export async function listPublishableKeys(store: PublishableKeyStore, programId: string): Promise<PublishableKey[]> {
  const keys = await store.publishableKeys.find({ programId }).sort({ createdAt: -1 }).lean<PublishableKeyDocument[]>();
  return keys.map(toPublishableKey);
}

/**
 * Revoking twice is fine. `programId` scopes a program's own revocation (its API key may only
 * revoke its own keys); the operator passes none.
 */
export async function revokePublishableKey(
  store: PublishableKeyStore,
  id: string,
  programId?: string,
): Promise<{ id: string; revoked: true }> {
  const scope = programId === undefined ? { _id: id } : { _id: id, programId };
  const updated = await store.publishableKeys.updateOne({ ...scope, revokedAt: null }, { $set: { revokedAt: new Date() } });
  if (updated.matchedCount === 0 && !(await store.publishableKeys.exists(scope))) throw notFound(`No publishable key with id ${id}`);
  return { id, revoked: true };
}

export async function findPublishableKeyByHash(
  publishableKeys: PublishableKeyModel,
  keyHash: string,
): Promise<PublishableKeyDocument | null> {
  return publishableKeys.findOne({ keyHash }).lean<PublishableKeyDocument>();
}

function toPublishableKey(document: PublishableKeyDocument): PublishableKey {
  return {
    id: document._id,
    programId: document.programId,
    key: document.key,
    createdAt: new Date(document.createdAt).toISOString(),
    revokedAt: document.revokedAt ? new Date(document.revokedAt).toISOString() : null,
  };
}
