import { MIMEType } from 'node:util';

/**
 * The one reading of a JSON body's bytes, shared by every service's parser (createServiceApp) and the
 * gateway's body-dependent scope judgement (gateway/src/auth/scopes.ts), so the two can never read one
 * body two ways. Body-parser alone would strip a UTF-8 byte-order mark and decode any `utf-*` charset
 * (UTF-16LE, UTF-7); a gateway reading the same bytes as plain UTF-8 would then miss a field the service
 * sees (issue 27: `payoutDetails` or `rotateSecret` past a write-only key). So: UTF-8 only (415 for any
 * other charset), no byte-order mark (400), no invalid bytes (400).
 */
export class UnreadableJsonBody extends Error {
  /** body-parser's error shape: the service's errorHandler answers `message` with `status`. */
  readonly type = 'entity.encoding.invalid';
  constructor(
    readonly status: 400 | 415,
    message: string,
  ) {
    super(message);
  }
}

const UTF8_CHARSETS = new Set(['utf-8', 'utf8']);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body's text; `charset` is the Content-Type's (undefined: none given, which is UTF-8). Throws UnreadableJsonBody. */
export function jsonTextOf(body: Buffer, charset: string | undefined): string {
  if (charset !== undefined && !UTF8_CHARSETS.has(charset.toLowerCase())) {
    throw new UnreadableJsonBody(
      415,
      `Request body must be UTF-8 JSON; charset "${charset}" is not accepted (send Content-Type: application/json or application/json; charset=utf-8)`,
    );
  }
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf)
    throw new UnreadableJsonBody(400, 'Request body must not start with a byte-order mark; send UTF-8 JSON without one');
  try {
    return utf8.decode(body);
  } catch {
    throw new UnreadableJsonBody(400, 'Request body is not valid UTF-8');
  }
}

/**
 * The charset parameter of a Content-Type header, as the gateway reads it: undefined when none is given,
 * `'unreadable'` when the header cannot be parsed (which jsonTextOf refuses, so a reading in doubt
 * fails closed).
 */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  try {
    return new MIMEType(contentType).params.get('charset') ?? undefined;
  } catch {
    return 'unreadable';
  }
}
