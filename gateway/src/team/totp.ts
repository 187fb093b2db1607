import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30 seconds. */
const totpOf = (secret: string, email = '') =>
  new TOTP({ issuer: 'Affiliate console', label: email, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });

/** A new secret (160 bits, RFC 4226's recommended length) and its otpauth:// URL for a QR code. */
export function newTotpSecret(email: string): { secret: string; otpauthUrl: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, otpauthUrl: totpOf(secret, email).toString() };
}

/** The code is the current one, or one step before or after (a phone's clock a little off, a code typed as it changed). */
export function totpCodeMatches(secret: string, code: string): boolean {
  return totpOf(secret).validate({ token: code, window: 1 }) !== null;
}
