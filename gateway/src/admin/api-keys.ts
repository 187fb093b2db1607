import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { insertUnique, notFound, UniqueKeyConflict, type Logger } from '@affiliate/platform';
import type { ApiKeyDocument, ApiKeyModel } from './api-key-model';
import type { AuditRecordModel } from './audit-log';
import type { PublishableKeyModel } from './publishable-keys';
import { createProgram, findLiveProgram } from './programs';
import type { ProgramRepository } from './program-model';

export const API_KEY_PREFIX = 'ak_live_';

export type AdminStore = { programs: ProgramRepository; apiKeys: ApiKeyModel; publishableKeys: PublishableKeyModel; auditRecords: AuditRecordModel };

export type CreatedApiKey = { id: string; key: string; programId: string; createdAt: string };
export type ApiKeySummary = { id: string; programId: string; displayPrefix: string; createdAt: string; revokedAt: string | null };

/** 32 random bytes (256 bits) behind a prefix that secret scanners and people recognise. */
export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * A fast hash is enough: the keys carry 256 bits of entropy, so there is nothing to brute-force,
 * and lookups by hash keep authentication off a slow path.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export async function createApiKey(store: AdminStore, programId: string, key: string = generateApiKey(), id: string = randomUUID()): Promise<CreatedApiKey> {
  if (!(await findLiveProgram(store.programs, programId))) throw notFound(`No program with id ${programId}`);
  const created = await insertUnique(store.apiKeys, { _id: id, programId, keyHash: hashApiKey(key), displayPrefix: key.slice(0, API_KEY_PREFIX.length + 4) }, ['keyHash']);
  return { id, key, programId, createdAt: created.createdAt.toISOString() };
}

/** Revoking twice is fine: the key stays revoked from the first time. */
export async function revokeApiKey(store: AdminStore, id: string): Promise<{ id: string; revoked: true }> {
  const now = new Date();
  const updated = await store.apiKeys.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: now } });
  if (updated.matchedCount === 0 && !(await store.apiKeys.exists({ _id: id }))) throw notFound(`No API key with id ${id}`);
  return { id, revoked: true };
}

export async function listApiKeys(store: AdminStore, programId: string): Promise<ApiKeySummary[]> {
  const keys = await store.apiKeys.find({ programId }).sort({ createdAt: -1 }).lean<ApiKeyDocument[]>();
  return keys.map((key) => ({
    id: key._id,
    programId: key.programId,
    displayPrefix: key.displayPrefix,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt ? key.revokedAt.toISOString() : null,
  }));
}

export async function findApiKeyByHash(apiKeys: ApiKeyModel, keyHash: string): Promise<ApiKeyDocument | null> {
  return apiKeys.findOne({ keyHash }).lean<ApiKeyDocument>();
}

/**
 * BOOTSTRAP_API_KEY: a demo program with that key, created once. Ids derive from the key, so
 * replicas starting together create the same records, and a restart after a crash between the two
 * writes finds the program and adds the key: each taken key (the store's one UniqueKeyConflict,
 * for the program and for the key alike) means that record is there already. A key that exists
 * (even revoked, or whose program was deleted) is left alone.
 */
export async function ensureBootstrapKey(store: AdminStore, key: string, logger: Logger): Promise<void> {
  const keyHash = hashApiKey(key);
  if (await store.apiKeys.exists({ keyHash })) return;
  const programId = uuidFromHash(hashApiKey(`program:${keyHash}`));
  const created = await createdUnlessTaken(
    createProgram(store.programs, {
      name: 'Demo program',
      urlModifier: 'ref',
      destinationUrls: [{ url: 'https://example.com/', params: {} }],
      requireApproval: false,
      defaultCommissionRate: 20,
      apiAccess: true,
      rateLimit: null,
    }, programId),
  );
  if (await createdUnlessTaken(createApiKey(store, programId, key, uuidFromHash(hashApiKey(`key:${keyHash}`))))) {
    logger.info({ programId, programCreated: created }, 'created the demo program for BOOTSTRAP_API_KEY');
  }
}

/** True when the write created its record; false when a taken key says another start (or an earlier one) did. */
async function createdUnlessTaken(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (error instanceof UniqueKeyConflict) return false;
    throw error;
  }
}

function uuidFromHash(hex: string): string {
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
