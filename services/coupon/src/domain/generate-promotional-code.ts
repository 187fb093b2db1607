import { randomInt } from 'node:crypto';
import { RANDOM_CHARS_LENGTH, type AffiliateSummary, type CreatePromotionalCodeBody } from '@affiliate/contracts';
import { badRequest } from '@affiliate/platform';
import type { CouponRecord } from '../data-access/coupon-model';
import { amountOffOf } from '../data-access/representations';

export const MAX_CODE_LENGTH = 64;

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALPHABETS = { uppercase: UPPER + DIGITS, lowercase: LOWER + DIGITS, mixed: UPPER + LOWER + DIGITS } as const;

/** Upper case, accents folded (José → JOSE), then only characters a code may hold. */
export function codeText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/[^A-Z0-9_-]/g, '');
}

/** 20 → "20", 12.5 → "12_5": the decimal point is not a code character, and dropping it would read as 125. */
export function discountText(coupon: CouponRecord): string {
  const value = coupon.couponType === 'PERCENTAGE' ? coupon.percentOff : amountOffOf(coupon);
  return value === null ? '' : String(value).replace('.', '_');
}

function randomChars(length: number, letterCase: keyof typeof ALPHABETS): string {
  const alphabet = ALPHABETS[letterCase];
  return Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
}

export type GenerationRequest = Pick<CreatePromotionalCodeBody, 'prefix' | 'codeStructure' | 'randomCharsLength' | 'randomCharsCase'>;

/**
 * Builds a code once, at creation (spec): parts in the fixed order prefix, first name, last name,
 * email local part, discount value, coupon name, random characters; each structural part only
 * when its codeStructure key is true. Text parts are upper case; random characters follow
 * randomCharsCase (default uppercase) and randomCharsLength (1 to 32, default 6).
 */
export function generatePromotionalCode(request: GenerationRequest, affiliate: AffiliateSummary, coupon: CouponRecord): string {
  const structure = request.codeStructure ?? {};
  const parts = [
    codeText(request.prefix ?? ''),
    structure.firstName ? codeText(affiliate.firstName) : '',
    structure.lastName ? codeText(affiliate.lastName) : '',
    structure.emailLocalPart ? codeText(affiliate.email.split('@')[0] ?? '') : '',
    structure.discountAmount ? discountText(coupon) : '',
    structure.couponName ? codeText(coupon.name ?? '') : '',
    structure.randomChars
      ? randomChars(request.randomCharsLength ?? RANDOM_CHARS_LENGTH.default, request.randomCharsCase ?? 'uppercase')
      : '',
  ];
  const code = parts.join('');
  if (code.length === 0) {
    throw badRequest(
      'codeStructure produced an empty code: enable at least one part that has letters or digits (randomChars always has)',
      'parameter_invalid',
      'codeStructure',
    );
  }
  if (code.length > MAX_CODE_LENGTH) {
    throw badRequest(
      `The generated code would be ${code.length} characters long; codes may have at most ${MAX_CODE_LENGTH}. Enable fewer parts`,
      'parameter_invalid',
      'codeStructure',
    );
  }
  return code;
}

/**
 * A rule whose fixed parts (prefix, discount, coupon name, random characters) are already longer than
 * a code may be could never issue one: refused when it is set (400), so the coupon is left unchanged.
 */
export function refuseUnusableRule(rule: GenerationRequest | null | undefined, coupon: CouponRecord): void {
  if (!rule) return;
  const structure = rule.codeStructure ?? {};
  const fixed =
    codeText(rule.prefix ?? '').length +
    (structure.discountAmount ? discountText(coupon).length : 0) +
    (structure.couponName ? codeText(coupon.name ?? '').length : 0) +
    (structure.randomChars ? (rule.randomCharsLength ?? RANDOM_CHARS_LENGTH.default) : 0);
  if (fixed > MAX_CODE_LENGTH) {
    throw badRequest(
      `autoCouponRule: its fixed parts alone make ${fixed} characters; codes may have at most ${MAX_CODE_LENGTH}. Shorten the prefix or the coupon name, or enable fewer parts`,
      'parameter_invalid',
      'autoCouponRule',
    );
  }
}
