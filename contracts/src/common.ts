import { isActiveCurrency } from './currency';
import { ErrorCodeSchema } from './errors';
import { z } from './zod';

export const Uuid = z.string().uuid();
/**
 * An RFC 3339 instant. zod checks the calendar (no 30 February) but not the offset, so
 * `+99:99` would pass and later fail as an Invalid Date (a 500): offsets must be real
 * (hours 00-23, minutes 00-59) and the whole must name one instant.
 */
export const DateTime = z
  .string()
  .datetime({ offset: true })
  .refine(isRealInstant, 'must be a real instant: an RFC 3339 date-time whose offset is at most ±23:59, e.g. 2024-01-01T00:00:00Z');

function isRealInstant(value: string): boolean {
  const offset = /([+-])(\d{2}):?(\d{2})$/.exec(value);
  if (offset && (Number(offset[2]) > 23 || Number(offset[3]) > 59)) return false;
  return Number.isFinite(Date.parse(value));
}
/** Line breaks, tabs and every other control character (C0, DEL, C1), and the Unicode line and paragraph separators. */
const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;

/**
 * Names and notes end up in CSV files a finance team opens in a spreadsheet, where a line break
 * starts a new row (and a row starting with = is a formula: CSV injection), and in logs and e-mails.
 * None of them needs a control character, so they are refused at the edge (400 naming the field).
 */
export const withoutControlCharacters = <Schema extends z.ZodType<string, z.ZodTypeDef, unknown>>(schema: Schema) =>
  schema.refine((value) => !CONTROL_CHARACTER.test(value), 'must not contain control characters such as line breaks or tabs');

/** Free-text identifiers supplied by integrators (external ids, slugs, names): bounded so a huge string is a 400, not a stored blob. */
export const ShortText = withoutControlCharacters(z.string().trim().min(1).max(200));
export const LongText = z.string().max(2000);
export const Email = z.string().trim().max(254).email();

/** A URL the system will send someone to or call: http or https only (never javascript:, data: or file:), the message naming the field. */
export const httpUrl = (field: string) =>
  z
    .string()
    .url()
    .max(2000)
    .refine((url) => /^https?:\/\//i.test(url), `${field} must be an http or https URL`);
/**
 * An active ISO 4217 code (the table in currency.ts, which the money module counts minor units by).
 * Lower case is accepted and stored upper case (`usd` is USD), everywhere a currency is read.
 */
export const Currency = z
  .string()
  .transform((code) => code.toUpperCase())
  .refine(isActiveCurrency, 'must be an active ISO 4217 currency code in upper or lower case, such as USD, EUR or JPY')
  .openapi({ description: 'An active ISO 4217 currency code (USD, EUR, JPY, KWD…); lower case is accepted and stored upper case' });
/** Money and rates arrive as JSON numbers; NaN and Infinity never survive JSON, but guard anyway. */
export const Amount = z.number().finite().nonnegative().max(1e12);
export const Metadata = z.record(z.string().max(40), z.string().max(500)).refine((entries) => Object.keys(entries).length <= 50, {
  message: 'may have at most 50 keys',
});

/** Query-string flags and numbers arrive as text. */
export const QueryInteger = z.coerce.number().int();

/**
 * On a 400 with several problems, all of them: the field (dotted path; null for the request as a
 * whole) and what is wrong. A single problem keeps the specification's `{ error }` body as it is.
 */
export const ProblemList = z
  .array(z.object({ param: z.string().nullable(), message: z.string() }).openapi('Problem'))
  .optional()
  .openapi({
    description:
      'On a 400 that found more than one problem: every problem, the first being the one `error` (or `message`) describes; param is the field (a dotted path), null when the problem is not one field. Absent when there is one problem',
  });

/**
 * What every error body adds to the specification's fields: the catalogued `code` (contracts/src/errors.ts),
 * the field at fault, and the request id to quote to support.
 */
const ErrorDetails = {
  code: ErrorCodeSchema,
  param: z
    .string()
    .nullable()
    .optional()
    .openapi({ description: 'The field at fault as a dotted path (address.city), when the error concerns one field; absent otherwise' }),
  requestId: z.string().openapi({
    description: 'The id of this request: the X-Request-Id header of this answer, and the key of its log lines; quote it to support',
  }),
};

export const ErrorBody = z.object({ error: z.string(), ...ErrorDetails, errors: ProblemList }).openapi('Error', {
  description:
    'Every failure: a human-readable description of what was wrong (on a 400 the first problem; when there are several, all of them in errors), the catalogued code a program acts on, the field at fault and the request id.',
});

/** DELETE /coupons and PUT /referrals document `error` as the status number with a separate message. */
export const NumberedErrorBody = z
  .object({ error: z.number().int(), message: z.string(), ...ErrorDetails, errors: ProblemList })
  .openapi('NumberedError', {
    description: 'Error shape of DELETE /coupons and PUT /referrals, with the same code, param and requestId as every other error.',
  });

/** The operations whose errors the spec documents as `{ error: <status>, message }`. */
export const NUMBERED_ERROR_OPERATIONS: readonly string[] = ['DELETE /coupons', 'PUT /referrals'];

/**
 * The answers an Idempotency-Key keeps for 24 h and replays (with `Idempotent-Replayed: true`).
 * Answers that a retry could change (server errors, conflicts, rate limits) are not kept, and
 * neither is a 400 or a 415: as in Stripe, a request refused before it executed leaves its key unused, so
 * the corrected request can be sent with the same key. The gateway keeps by it; the document says it.
 */
export function isKeptForReplay(status: number): boolean {
  return status < 500 && status !== 400 && status !== 409 && status !== 415 && status !== 429;
}

/**
 * The page of a list. Strict, as every query is: a parameter a list does not take is a 400 naming it,
 * so a typo never silently answers the whole list (the lists that extend it stay strict).
 */
export const ListQuery = z
  .object({
    limit: QueryInteger.min(1)
      .max(1000)
      .optional()
      .openapi({ param: { description: 'Page size, 1 to 1000 (default 100)' } }),
    startingAfter: z
      .string()
      .max(100)
      .optional()
      .openapi({ param: { description: 'The id of the last object of the previous page (from the Link header); pages run newest first' } }),
  })
  .strict();

/** The query of an operation that takes no parameter: any one sent is a 400 naming it. */
export const NoQuery = z.object({}).strict();

/**
 * A period filter of a list: `<field>[gte]` (from, included) and `<field>[lt]` (to, excluded), e.g.
 * `createdAt[gte]=2026-01-01T00:00:00Z`. Queries are parsed flat (Node's querystring, the 'simple'
 * parser): a bracketed name is one plain parameter, never a nested object, so equality filters stay
 * plain strings and a repeated or nested parameter is refused.
 */
export function dateRange<Field extends string>(field: Field, what: string) {
  const bound = (description: string) => DateTime.optional().openapi({ description });
  return {
    [`${field}[gte]`]: bound(`Only those whose ${what} is at or after this instant`),
    [`${field}[lt]`]: bound(`Only those whose ${what} is before this instant`),
  } as { [Key in `${Field}[gte]` | `${Field}[lt]`]: ReturnType<typeof bound> };
}

/** `format=csv`: every matching row (all pages) as one streamed CSV file with a header row; also with `Accept: text/csv`. */
export const ListFormat = z.enum(['json', 'csv']).optional().openapi({
  description:
    'csv: every matching row, not one page, as a CSV file with a header row (also with Accept: text/csv); limit and startingAfter do not apply',
});

export type ErrorBody = z.infer<typeof ErrorBody>;
export type NumberedErrorBody = z.infer<typeof NumberedErrorBody>;
