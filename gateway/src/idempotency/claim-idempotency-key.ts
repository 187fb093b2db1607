import { isKeptForReplay } from '@affiliate/contracts';
import { unlessKeyTaken, UniqueKeyConflict } from '@affiliate/platform';
import type { Types } from 'mongoose';
import {
  IDEMPOTENCY_WINDOW_SECONDS,
  type IdempotencyRecordDocument,
  type IdempotencyRecordModel,
  type StoredResponse,
} from './idempotency-record';

export type Claim =
  | { kind: 'claimed'; recordId: Types.ObjectId }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'different-request' }
  | { kind: 'in-progress' };

export type ClaimRequest = { programId: string; key: string; requestHash: string; now?: Date };

/**
 * Claims (program, key) with a unique insert, so of two simultaneous requests exactly one goes
 * through. A record older than the window is gone; one stuck in `processing` longer than
 * `abandonedAfterMs` belonged to a gateway that died mid-request and may be taken over.
 */
export async function claimIdempotencyKey(
  records: IdempotencyRecordModel,
  request: ClaimRequest,
  abandonedAfterMs: number,
): Promise<Claim> {
  const now = request.now ?? new Date();
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const created = await unlessKeyTaken(() =>
      records.create({
        programId: request.programId,
        key: request.key,
        requestHash: request.requestHash,
        state: 'processing',
        response: null,
        createdAt: now,
      }),
    );
    if (!(created instanceof UniqueKeyConflict)) return { kind: 'claimed', recordId: created._id };
    const existing = await records.findOne({ programId: request.programId, key: request.key }).lean<IdempotencyRecordDocument>();
    if (!existing) continue;
    const age = now.getTime() - existing.createdAt.getTime();
    const expired = age > IDEMPOTENCY_WINDOW_SECONDS * 1000;
    const abandoned = existing.state === 'processing' && age > abandonedAfterMs;
    if (expired || abandoned) {
      await records.deleteOne({ _id: existing._id, state: existing.state, createdAt: existing.createdAt });
      continue;
    }
    if (existing.requestHash !== request.requestHash) return { kind: 'different-request' };
    if (existing.state === 'processing' || !existing.response) return { kind: 'in-progress' };
    return { kind: 'replay', response: { ...existing.response, body: toBuffer(existing.response.body) } };
  }
  return { kind: 'in-progress' };
}

export async function completeIdempotencyKey(
  records: IdempotencyRecordModel,
  recordId: Types.ObjectId,
  response: StoredResponse,
): Promise<void> {
  if (!isKeptForReplay(response.status)) {
    await releaseIdempotencyKey(records, recordId);
    return;
  }
  await records.updateOne({ _id: recordId, state: 'processing' }, { $set: { state: 'completed', response } });
}

export async function releaseIdempotencyKey(records: IdempotencyRecordModel, recordId: Types.ObjectId): Promise<void> {
  await records.deleteOne({ _id: recordId, state: 'processing' });
}

function toBuffer(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  // lean() hands back a BSON Binary for Buffer fields; its bytes are a Uint8Array view.
  const bytes = (body as { buffer?: unknown } | null)?.buffer;
  return bytes instanceof Uint8Array ? Buffer.from(bytes) : Buffer.alloc(0);
}
