import { createHash, randomBytes } from 'node:crypto';
import { constantTimeEquals } from '@affiliate/platform';
import type { Model } from 'mongoose';

/**
 * The credentials of the gateway's browser sessions (affiliate portal links and cookies, console
 * invites and sessions): `<document id>.<secret>`, of which only the secret's SHA-256 is stored. So
 * each is checked by a point read on `_id` and a constant-time comparison of hashes, with no
 * secondary index to keep (DESIGN.md §8).
 */
export const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
export const newSecret = () => randomBytes(32).toString('base64url');
const CREDENTIAL = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/;

/** The document a credential names, when the secret's hash matches the one stored in `field`. */
export async function byCredential<T extends { _id: string }>(
  model: Model<T>,
  credential: string,
  field: keyof T & string,
): Promise<T | null> {
  const match = CREDENTIAL.exec(credential);
  if (!match) return null;
  const found = await model.findOne({ _id: match[1] }).lean<T>();
  const stored = found?.[field];
  return found && typeof stored === 'string' && constantTimeEquals(hashOf(match[2] as string), stored) ? found : null;
}
