import { createHash, randomUUID } from 'node:crypto';
import type { AuditRecord } from '@affiliate/contracts';
import { findPage, unlessKeyTaken, UniqueKeyConflict, type PageRequest } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';
import { retentionFields, uuidFromHash } from './retention';

type Actor = AuditRecord['actor'];

export type AuditRecordDocument = {
  _id: string;
  createdAt: Date;
  actor: Actor;
  action: string;
  targetId: string | null;
  status: number;
  requestId: string | null;
  /** Refused attempts from one address in one window share a record; anything else is one. */
  count?: number;
  lastAt?: Date;
  /** Past this the record is deleted (a TTL index on MongoDB; the gateway's sweep where TTL does not run). */
  expiresAt?: Date;
};

const auditRecordSchema = new Schema<AuditRecordDocument>(
  {
    _id: { type: String, default: () => randomUUID() },
    createdAt: { type: Date, required: true },
    actor: {
      credential: { type: String, required: true },
      address: { type: String, default: null },
      userAgent: { type: String, default: null },
      user: { type: String, default: null },
    },
    action: { type: String, required: true },
    targetId: { type: String, default: null },
    status: { type: Number, required: true },
    requestId: { type: String, default: null },
    count: { type: Number, default: undefined },
    lastAt: { type: Date, default: undefined },
    ...retentionFields,
  },
  { collection: 'admin_audit_records', versionKey: false },
);
auditRecordSchema.index({ createdAt: -1, _id: -1 });
auditRecordSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

export type AuditRecordModel = Model<AuditRecordDocument>;

export function auditRecordModel(connection: Connection): AuditRecordModel {
  return (
    (connection.models.AuditRecord as AuditRecordModel | undefined) ??
    connection.model<AuditRecordDocument>('AuditRecord', auditRecordSchema)
  );
}

export type AuditEntry = Pick<AuditRecordDocument, 'actor' | 'action' | 'targetId' | 'status' | 'requestId'>;

/** Where audit records go, and how long they are kept (the admin store is one). */
export type AuditLog = { auditRecords: AuditRecordModel; auditRetentionMs: number };

/** Appends one entry; the record is append-only (nothing in the code changes an entry, the retention sweep deletes old ones). */
export async function recordAudit(log: AuditLog, entry: AuditEntry): Promise<void> {
  const now = new Date();
  await log.auditRecords.create({
    ...entry,
    createdAt: now,
    lastAt: now,
    count: 1,
    expiresAt: new Date(now.getTime() + log.auditRetentionMs),
  });
}

/**
 * A refused attempt is counted in the record of its address and window, created by the first one
 * (which it describes): a flood of refusals writes one record per address per window, never one each.
 * The record's id derives from both, so counting is a point write by _id.
 */
export async function recordRefusal(log: AuditLog, entry: AuditEntry, windowMs: number): Promise<void> {
  const now = new Date();
  const windowStart = Math.floor(now.getTime() / windowMs) * windowMs;
  const _id = uuidFromHash(
    createHash('sha256')
      .update(`refused\n${entry.actor.address ?? 'unknown'}\n${windowStart}`)
      .digest('hex'),
  );
  const count = () =>
    log.auditRecords.updateOne(
      { _id },
      {
        $inc: { count: 1 },
        $set: { lastAt: now },
        $setOnInsert: { ...entry, createdAt: now, expiresAt: new Date(now.getTime() + log.auditRetentionMs) },
      },
      { upsert: true },
    );
  // Two first refusals at once: one inserted the record, the other counts in it.
  if ((await unlessKeyTaken(count)) instanceof UniqueKeyConflict) await count();
}

export async function listAuditRecords(
  records: AuditRecordModel,
  page: PageRequest,
): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
  const { items, nextCursor } = await findPage(records, {}, page);
  return { items: items.map(toAuditRecord), nextCursor };
}

function toAuditRecord(document: AuditRecordDocument): AuditRecord {
  return {
    id: document._id,
    at: document.createdAt.toISOString(),
    actor: {
      credential: document.actor.credential,
      address: document.actor.address ?? null,
      userAgent: document.actor.userAgent ?? null,
      user: document.actor.user ?? null,
    },
    action: document.action,
    targetId: document.targetId,
    status: document.status,
    requestId: document.requestId,
    count: document.count ?? 1,
    lastAt: (document.lastAt ?? document.createdAt).toISOString(),
  };
}
