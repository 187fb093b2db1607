import { programKey } from '@affiliate/platform';

/**
 * The database server honours neither partial nor sparse unique indexes: every document missing a
 * key counts as the same `null`. So each unique field is mirrored by a key that is always present
 * and unique: the value embedded with its program when there is one (what a lookup matches
 * exactly), otherwise a placeholder naming the document itself.
 */
export const externalIdKey = (programId: string, id: string, externalId: string | null): string =>
  externalId === null ? `none:${id}` : presentExternalIdKey(programId, externalId);

/** The key of an externalId that is set: also what a lookup by externalId searches for. */
export const presentExternalIdKey = (programId: string, externalId: string): string => programKey(programId, `ext:${externalId}`);

/** Codes are unique per program and looked up case-insensitively; the stored spelling is what responses show. */
export const codeKey = (programId: string, code: string): string => programKey(programId, code.trim().toUpperCase());
