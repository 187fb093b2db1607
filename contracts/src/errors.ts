import { z } from './zod';

type CatalogueEntry = {
  /** The statuses an answer with this code may have (most codes have one). */
  statuses: readonly number[];
  /** What it means and what the integrator does about it, as the document and docs/errors.md say it. */
  description: string;
};

/**
 * Every `code` an error body may carry: stable, snake_case, each with its statuses and meaning (as
 * Stripe's error codes). The message (`error`, or `message` in the numbered shape) stays the
 * specification's sentence for people; the code is what a program branches on. A code is never
 * renamed or reused for another meaning; a new refusal gets a new code here first. The document's
 * enum, docs/errors.md and the drift test all read this one list.
 */
export const ERROR_CATALOGUE = {
  // The request itself
  parameter_missing: {
    statuses: [400],
    description:
      'A required field is missing; `param` names it (absent when the request must send one of several fields, or something to change).',
  },
  parameter_invalid: {
    statuses: [400],
    description:
      'A field has a value that is not allowed (type, format, range, length, or a value another field rules out); `param` names it.',
  },
  parameter_unknown: { statuses: [400], description: 'A field or query parameter the operation does not take; `param` names it.' },
  parameters_exclusive: {
    statuses: [400],
    description: 'Fields that cannot be sent together, or that the other fields make meaningless (amountOff on a PERCENTAGE coupon).',
  },
  parameters_inconsistent: {
    statuses: [400],
    description:
      'Two fields name different objects (an affiliateId and an affiliateEmail of two affiliates); send identifiers of one object, or only one of them.',
  },
  body_malformed: {
    statuses: [400],
    description:
      'The body is not valid JSON, not a JSON object, not valid UTF-8, or could not be read (a broken compression, a wrong length).',
  },
  body_too_large: { statuses: [413], description: 'The body is larger than the limit (BODY_LIMIT, 1 MB by default).' },
  unsupported_media_type: {
    statuses: [415],
    description:
      'The body is not sent as application/json (the sign-up form also takes application/x-www-form-urlencoded); the message names the type accepted.',
  },
  route_missing: { statuses: [404], description: 'No operation at this method and path.' },
  // Credentials and permissions
  unauthenticated: {
    statuses: [401],
    description:
      'No credential, or not as `Authorization: Bearer <key>` (the admin API: not the admin token; the portal: no portal session).',
  },
  api_key_invalid: { statuses: [401], description: 'The API key is unknown or has been revoked.' },
  program_missing: { statuses: [404], description: 'The program of this API key no longer exists.' },
  api_access_disabled: { statuses: [403], description: 'API access is not enabled for the program of this key (an operator enables it).' },
  scope_missing: {
    statuses: [403],
    description: 'The API key lacks a scope the operation needs; the message names it. Create a key with it.',
  },
  key_type_not_allowed: { statuses: [403], description: 'A publishable key (pk_…) on a secret route, or a secret key on a browser route.' },
  origin_not_allowed: {
    statuses: [403],
    description: "The browser origin is not in the program's allowedOrigins, or a portal or sign-up write does not come from its own page.",
  },
  csrf_token_invalid: {
    statuses: [403],
    description: "The portal's or the console session's X-CSRF-Token is missing or wrong: reload the page.",
  },
  team_session_required: {
    statuses: [403],
    description:
      "The team's routes (/api/v1/team/*, /api/v1/api-keys) take a member's console session, never an API key: sign in to the console.",
  },
  role_forbidden: {
    statuses: [403],
    description:
      "The signed-in member's role may not make this operation (FINANCE: payouts, the review queue and reads; ANALYST: reads; members and keys are the OWNER's); the message names the role and the operation.",
  },
  credentials_invalid: { statuses: [401], description: 'Wrong email or password (the same answer for an unknown email).' },
  totp_required: { statuses: [401], description: "The member turned TOTP on: send the authenticator app's code as totpCode." },
  totp_invalid: {
    statuses: [400, 401],
    description: "The authenticator app's code is wrong, too old, or already used once; use the app's next code.",
  },
  totp_enabled: {
    statuses: [409],
    description:
      'The second factor is on: a new one is set up only after turning it off with a code of the app (DELETE /api/v1/team/totp).',
  },
  totp_enrolment_missing: { statuses: [400], description: 'No TOTP secret to confirm: start with POST /api/v1/team/totp.' },
  invite_invalid: { statuses: [401], description: 'The invite token is not one the gateway issued (incomplete or mistyped link).' },
  invite_used: {
    statuses: [410],
    description: 'The invite was already accepted: each link works once. Ask an OWNER for a new one.',
  },
  invite_revoked: {
    statuses: [410],
    description:
      'The invite was withdrawn (an OWNER removed it, invited the address again, or the program was deleted). Ask an OWNER for a new one.',
  },
  invite_expired: { statuses: [410], description: 'The invite is older than 72 hours. Ask an OWNER for a new one.' },
  member_exists: {
    statuses: [409],
    description:
      'A team member with this email already exists: on an invite, a member of this program; on accepting one, a member of any program (an email is one member across the gateway).',
  },
  last_owner: {
    statuses: [409],
    description: 'The member is the last OWNER of the program and must stay one: make another member OWNER first.',
  },
  portal_session_refused: {
    statuses: [403],
    description:
      'The portal session no longer works for this (the affiliate is not ACTIVE, or the session predates a rule); open the portal with a new link.',
  },
  forbidden: { statuses: [403], description: 'The caller may not do this (a program setting does not allow it); the message says which.' },
  // Objects
  resource_missing: {
    statuses: [400, 404],
    description: 'No such object in this program: 404 when it is the object of the request, 400 when a field (`param`) refers to it.',
  },
  email_taken: { statuses: [400], description: 'An affiliate or a referral with this email already exists in the program.' },
  link_taken: { statuses: [400], description: 'This referral link is already in use in the program.' },
  code_taken: {
    statuses: [400],
    description: 'This promotional code is already in use in the program (a generated one: include randomChars to make it unique).',
  },
  external_id_taken: { statuses: [400], description: 'An object of this kind with this externalId already exists in the program.' },
  slug_taken: { statuses: [400], description: 'Another program has this slug.' },
  limit_reached: {
    statuses: [400],
    description:
      'A limit of the program or of one request is reached (webhook endpoints, active publishable keys, deliveries per event, events in one replay); delete one, ask for less, or ask the operator.',
  },
  last_link: { statuses: [400], description: "The link is the affiliate's last one; every affiliate keeps at least one." },
  commission_plan_in_use: {
    statuses: [400],
    description: "The commission plan is the program's default or affiliates are on it; move them first.",
  },
  status_transition_invalid: {
    statuses: [400],
    description:
      'The object is in a status that does not allow this change (a payout already PAID, a commission already in a payout, a commission not HELD).',
  },
  affiliate_not_active: {
    statuses: [400],
    description: 'The affiliate is not ACTIVE (PENDING, REJECTED or deactivated), or no longer exists, so it cannot earn this sale.',
  },
  attribution_failed: {
    statuses: [400],
    description:
      'Nothing in the request attributes it to an affiliate of the program: an unknown click, visitor, link or referral, a click older than the attribution window, or (browser routes) a customer already referred.',
  },
  promotional_code_not_redeemable: {
    statuses: [400],
    description:
      'The promotional code cannot be redeemed for this sale: unknown, inactive, expired, without an affiliate, its coupon no longer valid, another currency, below the minimum amount, or limited to other customers, first orders or products.',
  },
  sale_reversed: {
    statuses: [400],
    description: 'The sale with this externalId was reversed; a reversed payment cannot be recorded again.',
  },
  webhook_endpoint_unavailable: {
    statuses: [400],
    description: 'The webhook endpoint is disabled or deleted; enable it (PUT /webhook-endpoints with active: true) first.',
  },
  integration_not_configured: {
    statuses: [400],
    description: 'The integration is not connected to the program (Stripe: store its webhook signing secret first).',
  },
  signature_invalid: {
    statuses: [400],
    description: 'A signature (Stripe-Signature) is missing or does not verify with the stored secret.',
  },
  // Retries and concurrency
  idempotency_key_invalid: { statuses: [400], description: 'The Idempotency-Key is not 1 to 255 printable characters without spaces.' },
  idempotency_key_reused: {
    statuses: [409],
    description: 'The Idempotency-Key was already used with a different request; use a new key for a new request.',
  },
  idempotency_key_in_use: {
    statuses: [409],
    description: 'A request with this Idempotency-Key is still running; retry after Retry-After seconds to get its answer.',
  },
  external_id_reused: {
    statuses: [409],
    description:
      'A sale with this externalId was already recorded with another amount, currency or attribution; a new payment needs a new externalId.',
  },
  concurrent_modification: {
    statuses: [409],
    description: 'Another request is changing or processing the same object right now; retry (after Retry-After seconds when given).',
  },
  rate_limited: {
    statuses: [429],
    description: "This API key's rate limit on this route and method is spent; retry after Retry-After seconds.",
  },
  address_rate_limited: {
    statuses: [429],
    description:
      'Too many requests from this address (without a credential, with a publishable key, or applications to a program); retry after Retry-After seconds.',
  },
  authentication_rate_limited: {
    statuses: [429],
    description: 'Too many failed authentications from this address; retry after Retry-After seconds.',
  },
  login_throttled: {
    statuses: [429],
    description:
      'Too many failed console sign-ins for this email or from this address; every attempt is refused until Retry-After seconds have passed.',
  },
  heavy_operations_limited: {
    statuses: [429],
    description: 'Too many heavy operations (reports, payout runs, exports) of this program at once; retry when one has finished.',
  },
  // The platform
  service_busy: {
    statuses: [503],
    description:
      'A service is shedding load (its queue is full, or this program has too many requests waiting); retry after Retry-After seconds.',
  },
  service_unavailable: { statuses: [503], description: 'A service or the database cannot be reached; retry after Retry-After seconds.' },
  upstream_error: {
    statuses: [502],
    description: 'A service gave another an answer it did not expect; retry, and quote the requestId if it persists.',
  },
  internal_error: { statuses: [500], description: 'Something failed on our side; quote the requestId to support.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as [ErrorCode, ...ErrorCode[]];

/**
 * The code of an error no thrower named: the generic code of its status. Each domain refusal names
 * its own; this is for the platform's generic answers (a 404 of an object, a 409 of a race).
 */
export function defaultErrorCodeOf(status: number): ErrorCode {
  const byStatus: Record<number, ErrorCode> = {
    400: 'parameter_invalid',
    401: 'unauthenticated',
    403: 'forbidden',
    404: 'resource_missing',
    409: 'concurrent_modification',
    413: 'body_too_large',
    415: 'unsupported_media_type',
    429: 'rate_limited',
    502: 'upstream_error',
    503: 'service_unavailable',
  };
  return byStatus[status] ?? (status >= 500 ? 'internal_error' : 'parameter_invalid');
}

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && Object.hasOwn(ERROR_CATALOGUE, value);

/** The `code` member of every error body: the catalogue as an enum, each value described (x-enumDescriptions, as Redocly and Scalar show them). */
export const ErrorCodeSchema = z.enum(ERROR_CODES).openapi('ErrorCode', {
  description:
    'What went wrong, for a program to act on: stable and snake_case, never renamed (docs/errors.md lists each with its status). The message beside it is for people and may be reworded.',
  'x-enumDescriptions': Object.fromEntries(
    Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [code, `${entry.statuses.join(', ')}: ${entry.description}`]),
  ),
} as Record<string, unknown>);

/** The catalogue as a Markdown table, a row per code: docs/errors.md and the errors guide (docs/guides/errors.md) show it. */
export function errorCatalogueTable(): string {
  const rows = Object.entries(ERROR_CATALOGUE).map(
    ([code, entry]) => `| \`${code}\` | ${entry.statuses.join(', ')} | ${entry.description.replace(/\|/g, '\\|')} |`,
  );
  return ['| Code | Status | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** docs/errors.md: the fields every error adds, and the catalogue (a test keeps the page equal to it). */
export function errorCatalogueMarkdown(): string {
  return [
    '# Error codes',
    '',
    '<!-- Generated from contracts/src/errors.ts (ERROR_CATALOGUE) by `UPDATE_ERROR_DOCS=1 npx jest contracts/test/error-catalogue.test.ts`; contracts/test/error-catalogue.test.ts fails when this page and the catalogue differ. -->',
    '',
    'Every error answer keeps the specification\'s body — `{"error": "<message>"}`, or `{"error": <status>, "message": "<message>"}` on DELETE /coupons and PUT /referrals — and adds:',
    '',
    '- `code`: what went wrong, from the table below: stable and snake_case, never renamed. Branch on it, not on the message, which is for people and may be reworded.',
    '- `param`: the field at fault as a dotted path (`address.city`, `answers.site`), when the error concerns one field; absent otherwise.',
    "- `requestId`: the id of this request, the same as the `X-Request-Id` header of the answer. Quote it to support: every log line of the request carries it. A replayed answer (`Idempotent-Replayed: true`) names the replay's id.",
    '- `errors` (a 400 that found more than one problem): every problem as `{param, message}`, the first being the one `error` describes.',
    '',
    '```json',
    '{ "error": "email: an affiliate with email ada@example.com already exists in this program", "code": "email_taken", "param": "email", "requestId": "7c0e5b1e-…" }',
    '```',
    '',
    'A 429 and a 503 carry `Retry-After`; so does a 409 `idempotency_key_in_use`.',
    '',
    errorCatalogueTable(),
    '',
  ].join('\n');
}
