/**
 * The one currency table of the platform: which codes are currencies (the active ISO 4217 codes the
 * runtime's Intl data lists) and how many decimal digits their minor unit has (JPY 0, USD 2, KWD 3).
 * Validation (the `Currency` schema) and the money module both read it, so a code that passes
 * validation always has the digits money is counted in.
 */
const ACTIVE_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
const digitsByCurrency = new Map<string, number>();

/** An active ISO 4217 code, upper case (`usd` is not one: the schema upper-cases before asking). */
export const isActiveCurrency = (code: string): boolean => ACTIVE_CODES.has(code);

/**
 * Decimal digits of the currency's minor unit. A code outside the table (only data stored before
 * codes were checked can carry one) counts in cents, like most currencies.
 */
export function minorUnitDigits(currency: string): number {
  const code = currency.toUpperCase();
  let digits = digitsByCurrency.get(code);
  if (digits === undefined) {
    digits = isActiveCurrency(code)
      ? (new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2)
      : 2;
    digitsByCurrency.set(code, digits);
  }
  return digits;
}
