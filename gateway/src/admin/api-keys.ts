import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { API_SCOPES, type ApiScope } from '@affiliate/contracts';
import { insertUnique, notFound, UniqueKeyConflict, type Logger, type StoreContext } from '@affiliate/platform';
import { apiKeyModel, type ApiKeyDocument, type ApiKeyModel } from './api-key-model';
import { auditRecordModel, type AuditRecordModel } from './audit-log';
import { ProgramAuditLog, programAuditRecordModel } from './program-audit-log';
import { ProgramRepository } from './program-model';
import { createProgram, findLiveProgram } from './programs';
import { publishableKeyModel, type PublishableKeyModel } from './publishable-keys';
import { uuidFromHash } from './retention';

export const API_KEY_PREFIX = 'ak_live_';

export type AdminStore = {
  programs: ProgramRepository;
  apiKeys: ApiKeyModel;
  publishableKeys: PublishableKeyModel;
  auditRecords: AuditRecordModel;
  /** Each program's record of what its keys did with secrets, bank details and payouts. */
  programAudit: ProgramAuditLog;
  /** How long audit records (the operators' and the programs') are kept. */
  auditRetentionMs: number;
};

/** The gateway's own data, for the gateway and the admin CLI alike. */
export function createAdminStore(context: StoreContext, auditRetentionMs: number): AdminStore {
  const { connection } = context;
  return {
    programs: new ProgramRepository(context),
    apiKeys: apiKeyModel(connection),
    publishableKeys: publishableKeyModel(connection),
    auditRecords: auditRecordModel(connection),
    programAudit: new ProgramAuditLog(programAuditRecordModel(connection), auditRetentionMs),
    auditRetentionMs,
  };
}

export type CreatedApiKey = { id: string; key: string; programId: string; scopes: ApiScope[]; createdAt: string };
export type ApiKeySummary = {
  id: string;
  programId: string;
  displayPrefix: string;
  scopes: ApiScope[];
  createdAt: string;
  revokedAt: string | null;
};

/** A key stored without scopes (every key made before they existed, and any made without them) may do everything. */
export const scopesOfKey = (key: Pick<ApiKeyDocument, 'scopes'>): ApiScope[] => (key.scopes ? [...key.scopes] : [...API_SCOPES]);

export type NewApiKey = { key?: string; id?: string; scopes?: ApiScope[] };

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

export async function createApiKey(store: AdminStore, programId: string, options: NewApiKey = {}): Promise<CreatedApiKey> {
  const { key = generateApiKey(), id = randomUUID(), scopes } = options;
  if (!(await findLiveProgram(store.programs, programId))) throw notFound(`No program with id ${programId}`);
  const created = await insertUnique(
    store.apiKeys,
    { _id: id, programId, keyHash: hashApiKey(key), displayPrefix: key.slice(0, API_KEY_PREFIX.length + 4), scopes },
    ['keyHash'],
  );
  return { id, key, programId, scopes: scopesOfKey(created), createdAt: created.createdAt.toISOString() };
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
    scopes: scopesOfKey(key),
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
 * (even revoked, or whose program was deleted) is left alone. Answers the key's program: the demo
 * program, for its owner (BOOTSTRAP_OWNER_EMAIL).
 */
export async function ensureBootstrapKey(store: AdminStore, key: string, logger: Logger): Promise<string> {
  const keyHash = hashApiKey(key);
  const existing = await findApiKeyByHash(store.apiKeys, keyHash);
  if (existing) return existing.programId;
  const programId = uuidFromHash(hashApiKey(`program:${keyHash}`));
  const created = await createdUnlessTaken(
    createProgram(
      store.programs,
      {
        name: 'Demo program',
        urlModifier: 'ref',
        destinationUrls: [{ url: 'https://example.com/', params: {} }],
        requireApproval: false,
        defaultCommissionRate: 20,
        apiAccess: true,
        rateLimit: null,
      },
      programId,
    ),
  );
  if (await createdUnlessTaken(createApiKey(store, programId, { key, id: uuidFromHash(hashApiKey(`key:${keyHash}`)) }))) {
    logger.info({ programId, programCreated: created }, 'created the demo program for BOOTSTRAP_API_KEY');
  }
  return programId;
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
