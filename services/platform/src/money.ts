/**
 * Money inside the services is an integer count of the currency's minor unit (cents for USD, yen
 * for JPY, fils for KWD); the API speaks decimal numbers. Every conversion and every percentage
 * goes through here, with one rounding rule: half away from zero, once. The digits of each currency
 * come from the contracts' currency table, the same one request validation checks codes against.
 */
import { minorUnitDigits } from '@affiliate/contracts';

export { minorUnitDigits };

/**
 * A decimal amount in minor units, half away from zero. The product is first cut to 15 significant
 * digits, so float noise (1.005 × 100 = 100.49999…) does not push a half unit the wrong way.
 */
export function toMinorUnits(amount: number, currency: string): number {
  const scaled = Number((Math.abs(amount) * 10 ** minorUnitDigits(currency)).toPrecision(15));
  const units = Math.round(scaled);
  return amount < 0 ? -units : units;
}

export function fromMinorUnits(units: number, currency: string): number {
  return units / 10 ** minorUnitDigits(currency);
}

/** A decimal amount as the API shows it: exactly what its minor units say. */
export const roundToMinorUnit = (amount: number, currency: string): number => fromMinorUnits(toMinorUnits(amount, currency), currency);

/** Rates are percentages with up to six decimals; finer digits are noise from the client's floats. */
const RATE_SCALE = 1_000_000n;

/**
 * `rate` % of an amount in minor units, rounded once, half away from zero, on integers
 * (1999 cents × 33.3 % is 665.667 → 666: no product of floats lands on the wrong side of a half).
 */
export function percentOfMinorUnits(units: number, rate: number): number {
  const numerator = BigInt(units) * BigInt(Math.round(rate * Number(RATE_SCALE)));
  const denominator = 100n * RATE_SCALE;
  const magnitude = ((numerator < 0n ? -numerator : numerator) * 2n + denominator) / (2n * denominator);
  return Number(numerator < 0n ? -magnitude : magnitude);
}
