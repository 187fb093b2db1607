import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';

/**
 * argon2id with OWASP's first recommended configuration (Password Storage Cheat Sheet): m=19456 KiB
 * (19 MiB), t=2, p=1. The parameters are written into each PHC string ($argon2id$v=19$m=19456,t=2,p=1$…),
 * so raising them later still verifies the older hashes.
 */
export const PASSWORD_HASH_OPTIONS: Options = {
  // Algorithm.Argon2id: the package declares an ambient const enum, which transpile-only builds (jest) cannot read.
  algorithm: 2 as Algorithm,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

export const hashPassword = (password: string): Promise<string> => hash(password, PASSWORD_HASH_OPTIONS);

/** A hash of nothing anyone knows: an unknown email is checked against it, so it takes as long as a wrong password. */
let decoy: Promise<string> | undefined;

/** Whether the password matches the stored hash; with no hash (an unknown email), false after the same work. */
export async function passwordMatches(storedHash: string | null, password: string): Promise<boolean> {
  decoy ??= hashPassword(randomBytes(32).toString('base64url'));
  const against = storedHash ?? (await decoy);
  const matches = await verify(against, password).catch(() => false);
  return storedHash !== null && matches;
}
