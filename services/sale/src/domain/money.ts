/** Rates are percentages with up to six decimals; finer digits are noise from the client's floats. */
const RATE_SCALE = 1_000_000n;

/**
 * An amount in whole cents, half away from zero. The product is first cut to 15 significant digits,
 * so float noise (1.005 × 100 = 100.49999…) does not push a half cent the wrong way.
 */
export function toCents(amount: number): bigint {
  const cents = Math.round(Number((Math.abs(amount) * 100).toPrecision(15)));
  return BigInt(cents) * (amount < 0 ? -1n : 1n);
}

export const fromCents = (cents: bigint): number => Number(cents) / 100;

export const roundToCents = (amount: number): number => fromCents(toCents(amount));

/**
 * totalEarned × commissionRate / 100, rounded half away from zero to the cent, computed on integers
 * (19.99 × 33.3 % is 6.656667 → 6.66, and no product of floats can land on the wrong side of a half cent).
 */
export function commissionOf(totalEarned: number, commissionRate: number): number {
  const cents = toCents(totalEarned);
  const rate = BigInt(Math.round(commissionRate * Number(RATE_SCALE)));
  const numerator = cents * rate;
  const denominator = 100n * RATE_SCALE;
  const magnitude = ((numerator < 0n ? -numerator : numerator) * 2n + denominator) / (2n * denominator);
  return fromCents(numerator < 0n ? -magnitude : magnitude);
}
