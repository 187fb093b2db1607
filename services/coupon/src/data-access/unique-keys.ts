/**
 * The database server honours neither partial nor sparse unique indexes: every document missing a
 * key counts as the same `null`. So each unique field is mirrored by a key that is always present
 * and unique: the real value when there is one, otherwise a placeholder naming the document itself.
 */
export const externalIdKey = (id: string, externalId: string | null): string =>
  externalId === null ? `none:${id}` : presentExternalIdKey(externalId);

/** The key of an externalId that is set: also what a lookup by externalId searches for. */
export const presentExternalIdKey = (externalId: string): string => `ext:${externalId}`;

/** Codes are unique and looked up case-insensitively; the stored spelling is what responses show. */
export const codeKey = (code: string): string => code.trim().toUpperCase();

/** A tombstone gives its unique keys up at once, so the same code or externalId can be used again. */
export const releasedKey = (id: string): string => `deleted:${id}`;

/** Which unique key a duplicate-key error is about (driver fields first, the message as fallback). */
export function duplicatedKey(error: unknown): string | undefined {
  const details = error as { keyPattern?: Record<string, unknown>; keyValue?: Record<string, unknown>; message?: string };
  const fields = Object.keys(details.keyPattern ?? details.keyValue ?? {});
  const named = fields.find((field) => field !== 'programId');
  if (named) return named;
  return ['codeKey', 'externalIdKey', 'redemptionKey'].find((field) => details.message?.includes(field));
}
