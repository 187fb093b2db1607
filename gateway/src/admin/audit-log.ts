import { randomUUID } from 'node:crypto';
import type { AuditRecord } from '@affiliate/contracts';
import { findPage, type PageRequest } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

type Actor = AuditRecord['actor'];

export type AuditRecordDocument = {
  _id: string;
  createdAt: Date;
  actor: Actor;
  action: string;
  targetId: string | null;
  status: number;
  requestId: string | null;
};

const auditRecordSchema = new Schema<AuditRecordDocument>(
  {
    _id: { type: String, default: randomUUID },
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
  },
  { collection: 'admin_audit_records', versionKey: false },
);
auditRecordSchema.index({ createdAt: -1, _id: -1 });

export type AuditRecordModel = Model<AuditRecordDocument>;

export function auditRecordModel(connection: Connection): AuditRecordModel {
  return (connection.models.AuditRecord as AuditRecordModel | undefined) ?? connection.model<AuditRecordDocument>('AuditRecord', auditRecordSchema);
}

export type AuditEntry = Omit<AuditRecordDocument, '_id' | 'createdAt'>;

/** Appends one entry; the record is append-only (nothing in the code updates or deletes it). */
export async function recordAudit(records: AuditRecordModel, entry: AuditEntry): Promise<void> {
  await records.create({ ...entry, createdAt: new Date() });
}

export async function listAuditRecords(records: AuditRecordModel, page: PageRequest): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
  const { items, nextCursor } = await findPage(records, {}, page);
  return { items: items.map(toAuditRecord), nextCursor };
}

function toAuditRecord(document: AuditRecordDocument): AuditRecord {
  return {
    id: document._id,
    at: document.createdAt.toISOString(),
    actor: { credential: document.actor.credential, address: document.actor.address ?? null, userAgent: document.actor.userAgent ?? null, user: document.actor.user ?? null },
    action: document.action,
    targetId: document.targetId,
    status: document.status,
    requestId: document.requestId,
  };
}
