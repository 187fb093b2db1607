import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30 seconds. */
const totpOf = (secret: string, email = '') =>
  new TOTP({ issuer: 'Affiliate console', label: email, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });

/** A new secret (160 bits, RFC 4226's recommended length) and its otpauth:// URL for a QR code. */
export function newTotpSecret(email: string): { secret: string; otpauthUrl: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, otpauthUrl: totpOf(secret, email).toString() };
}

/**
 * The time step (RFC 6238's T, 30-second steps since the epoch) of the code when it is the current one,
 * or one step before or after (a phone's clock a little off, a code typed as it changed); null when it
 * is none of them. The caller refuses a step it already accepted (RFC 6238 §5.2: a code works once).
 */
export function totpStepOf(secret: string, code: string, now = Date.now()): number | null {
  const delta = totpOf(secret).validate({ token: code, window: 1, timestamp: now });
  return delta === null ? null : Math.floor(now / 1000 / 30) + delta;
}
