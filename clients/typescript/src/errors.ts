/** One problem of a 400 that found several: the field (a dotted path; null for the request as a whole) and what is wrong. */
export type Problem = { param: string | null; message: string };

/**
 * An answer other than success, thrown by the resource methods (`client.sales.create`, `list`…).
 * It reads both error shapes of the API (`{ error: "…" }` and `{ error: <status>, message }`) and
 * the fields coded errors add (`code`, `param`, `requestId`); where an older server leaves them
 * out, `code` and `param` are undefined and `requestId` comes from the X-Request-Id header.
 */
export class AffiliateApiError extends Error {
  override readonly name = 'AffiliateApiError';

  constructor(
    /** The HTTP status: 400 bad input, 401/403 the key, 404 not found, 409 conflict, 429 too many requests… */
    readonly status: number,
    message: string,
    /** A stable snake_case code from the API's error catalogue, to branch on (the message is for people). */
    readonly code: string | undefined,
    /** The request field the error is about (a dotted path), when it is about one. */
    readonly param: string | null | undefined,
    /** The id to quote to support: the same as the X-Request-Id header. */
    readonly requestId: string | undefined,
    /** On a 400 that found several problems: all of them. */
    readonly errors: Problem[] | undefined,
    /** The body as it came (parsed JSON, or the text when it was not JSON). */
    readonly body: unknown,
  ) {
    super(message);
  }

  /** The error an answer carries; `body` is its parsed JSON (or text), as openapi-fetch gives it. */
  static from(response: Response, body: unknown): AffiliateApiError {
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const message =
      text(fields.message) ??
      text(fields.error) ??
      (typeof body === 'string' && body !== '' ? body.slice(0, 500) : `HTTP ${response.status} ${response.statusText}`.trim());
    const param = fields.param === null ? null : text(fields.param);
    const errors = Array.isArray(fields.errors) ? (fields.errors as Problem[]) : undefined;
    const requestId = text(fields.requestId) ?? response.headers.get('x-request-id') ?? undefined;
    return new AffiliateApiError(response.status, message, text(fields.code), param, requestId, errors, body);
  }
}
