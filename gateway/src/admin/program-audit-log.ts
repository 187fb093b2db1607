import { randomUUID } from 'node:crypto';
import type { ProgramAuditAction, ProgramAuditRecord } from '@affiliate/contracts';
import { findPage, type Logger, type PageRequest } from '@affiliate/platform';
import type { Response } from 'express';
import { Schema, type Connection, type Model } from 'mongoose';
import { deleteExpired, retentionFields } from './retention';

/** For an act in the affiliate portal: the session that did it, and its affiliate. */
type PortalActor = { affiliatePortalSessionId?: string; affiliateId?: string };

/** An API key, or a team member in the console; for an act in the affiliate portal, the key or member that opened it. */
export type ProgramAuditActor =
  ({ apiKeyId: string; apiKeyPrefix: string } & PortalActor) | ({ memberId: string; email: string } & PortalActor);

export type ProgramAuditRecordDocument = {
  _id: string;
  programId: string;
  createdAt: Date;
  /**
   * The key; for an act in the affiliate portal, also the session and its affiliate (the key is the
   * one that made the session); for an act of a team member in the console, the member alone (no key).
   */
  actor: ProgramAuditActor;
  action: ProgramAuditAction;
  operation: string;
  status: number;
  /** The client dropped the connection before the whole answer was sent. */
  aborted: boolean;
  requestId: string | null;
  expiresAt: Date;
};

const programAuditRecordSchema = new Schema<ProgramAuditRecordDocument>(
  {
    _id: { type: String, default: randomUUID },
    programId: { type: String, required: true },
    createdAt: { type: Date, required: true },
    actor: {
      apiKeyId: { type: String, default: undefined },
      apiKeyPrefix: { type: String, default: undefined },
      affiliatePortalSessionId: { type: String, default: undefined },
      affiliateId: { type: String, default: undefined },
      memberId: { type: String, default: undefined },
      email: { type: String, default: undefined },
    },
    action: { type: String, required: true },
    operation: { type: String, required: true },
    status: { type: Number, required: true },
    aborted: { type: Boolean, default: false },
    requestId: { type: String, default: null },
    ...retentionFields,
  },
  { collection: 'program_audit_records', versionKey: false },
);
programAuditRecordSchema.index({ programId: 1, createdAt: -1, _id: -1 });
programAuditRecordSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

export type ProgramAuditRecordModel = Model<ProgramAuditRecordDocument>;

export function programAuditRecordModel(connection: Connection): ProgramAuditRecordModel {
  return (
    (connection.models.ProgramAuditRecord as ProgramAuditRecordModel | undefined) ??
    connection.model<ProgramAuditRecordDocument>('ProgramAuditRecord', programAuditRecordSchema)
  );
}

export type ProgramAuditEntry = Omit<ProgramAuditRecordDocument, '_id' | 'programId' | 'createdAt' | 'expiresAt'>;

/** The program's own audit record: what its API keys (and its affiliates in portal sessions) did with secrets, bank details and payouts. Append-only, one insert. */
export class ProgramAuditLog {
  constructor(
    private readonly model: ProgramAuditRecordModel,
    private readonly retentionMs: number,
  ) {}

  async record(programId: string, entry: ProgramAuditEntry): Promise<void> {
    const now = new Date();
    await this.model.create({ ...entry, programId, createdAt: now, expiresAt: new Date(now.getTime() + this.retentionMs) });
  }

  /** The retention sweep: the one method that works across programs. */
  deleteExpiredAcrossPrograms(): Promise<number> {
    return deleteExpired(this.model, this.retentionMs);
  }

  /** Newest first, paged like every list; only this program's records. */
  async list(programId: string, page: PageRequest): Promise<{ items: ProgramAuditRecord[]; nextCursor: string | null }> {
    const { items, nextCursor } = await findPage(this.model, { programId }, page);
    return { items: items.map(toProgramAuditRecord), nextCursor };
  }
}

/**
 * Records an act once it is answered, with the status answered (refusals included), or once the
 * client went away before the answer was sent (`aborted`): exactly one record either way.
 */
export function recordWhenAnswered(
  audit: ProgramAuditLog,
  logger: Logger,
  programId: string,
  act: Pick<ProgramAuditEntry, 'actor' | 'action' | 'operation'>,
  response: Response,
): void {
  const requestId = String(response.locals.requestId ?? '') || null;
  let recorded = false;
  const record = () => {
    if (recorded) return;
    recorded = true;
    audit
      .record(programId, { ...act, status: response.statusCode, aborted: !response.writableFinished, requestId })
      .catch((error: unknown) => logger.error({ err: error, action: act.action }, "could not write the program's audit record"));
  };
  response.once('finish', record);
  response.once('close', record);
}

function toProgramAuditRecord(document: ProgramAuditRecordDocument): ProgramAuditRecord {
  return {
    id: document._id,
    at: document.createdAt.toISOString(),
    actor: actorOf(document.actor),
    action: document.action,
    operation: document.operation,
    status: document.status,
    aborted: document.aborted ?? false,
    requestId: document.requestId,
  };
}

function actorOf(actor: ProgramAuditActor): ProgramAuditRecord['actor'] {
  const portal = actor.affiliatePortalSessionId
    ? { affiliatePortalSessionId: actor.affiliatePortalSessionId, affiliateId: actor.affiliateId }
    : {};
  if ('memberId' in actor && actor.memberId) return { memberId: actor.memberId, email: actor.email, ...portal };
  const key = actor as Extract<ProgramAuditActor, { apiKeyId: string }>;
  return { apiKeyId: key.apiKeyId, apiKeyPrefix: key.apiKeyPrefix, ...portal };
}
