import type { Model } from 'mongoose';

/** The field a TTL index expires records by. */
export const retentionFields = { expiresAt: { type: Date, default: undefined } };

/**
 * Deletes the records past their retention. MongoDB's TTL monitor does it by `expiresAt`; the local
 * MongoDB-compatible server runs no TTL monitor, so the gateway sweeps on a timer too (a timed scan,
 * never per request). By `createdAt`, so records written before retention existed expire as well.
 */
export async function deleteExpired<Doc extends { createdAt: Date }>(
  model: Model<Doc>,
  retentionMs: number,
  now = new Date(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  return (await model.deleteMany({ createdAt: { $lte: cutoff } } as Parameters<Model<Doc>['deleteMany']>[0])).deletedCount;
}

/** A UUID-shaped id from a hex digest, so ids derived from content still read like every other id. */
export function uuidFromHash(hex: string): string {
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
