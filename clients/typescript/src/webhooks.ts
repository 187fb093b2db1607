import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './schema';

/** What a subscriber receives: one payload per public event type, told apart by `event`. */
export type WebhookEvent = {
  [Type in keyof webhooks]: webhooks[Type]['post']['requestBody']['content']['application/json'];
}[keyof webhooks];

/** Why a webhook was refused, so that a receiver can log something actionable. */
export type WebhookFailure =
  /** webhook-id, webhook-timestamp or webhook-signature missing or not in the Standard Webhooks form. */
  | 'MALFORMED_HEADER'
  /** webhook-timestamp further from this clock than the tolerance: a replay, or a clock out of sync. */
  | 'TIMESTAMP_SKEW'
  /** No v1 signature matches: the body is not the bytes that were sent (often: parsed and serialised again) or the secret is not this endpoint's. */
  | 'SIGNATURE_MISMATCH'
  /** The signature matches but the body is not JSON. */
  | 'MALFORMED_BODY';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly failure: WebhookFailure,
    message: string,
  ) {
    super(message);
  }
}

export type VerifyWebhookOptions = {
  /** How far webhook-timestamp may be from this clock, in seconds (default 300, as Standard Webhooks advises). */
  toleranceSeconds?: number;
  /** The clock to check against (default: now). */
  now?: Date;
};

/** Node's IncomingHttpHeaders, a plain object of any case, or a fetch Headers. */
export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

/**
 * Standard Webhooks verification (https://www.standardwebhooks.com): the platform signs
 * `<webhook-id>.<webhook-timestamp>.<raw body>` with HMAC-SHA256 under the base64 key of the
 * endpoint's `whsec_…` secret and sends `v1,<base64>` in webhook-signature (several, space
 * separated, while a secret is being rotated). Returns the parsed event, or throws a
 * WebhookVerificationError naming the failure. `payload` must be the body exactly as received:
 * a parsed object cannot be checked, so one is refused outright rather than failing obscurely.
 * `secret` may list several secrets (yours during a rotation); any one matching passes.
 */
export function verifyWebhook<Event = WebhookEvent>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Event {
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
    throw new TypeError(
      'verifyWebhook needs the raw body (a string or the received bytes), not a parsed object: JSON serialised again does not match the signature',
    );
  }
  const read = headerReader(headers);
  const id = read('webhook-id');
  const timestamp = read('webhook-timestamp');
  const signatures = read('webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      'MALFORMED_HEADER',
      'The webhook-id, webhook-timestamp and webhook-signature headers are all required',
    );
  if (!/^\d{1,15}$/.test(timestamp))
    throw new WebhookVerificationError('MALFORMED_HEADER', 'webhook-timestamp must be whole seconds since the epoch');

  const skew = Math.abs(Math.floor((options.now ?? new Date()).getTime() / 1000) - Number(timestamp));
  const tolerance = options.toleranceSeconds ?? 300;
  if (skew > tolerance)
    throw new WebhookVerificationError(
      'TIMESTAMP_SKEW',
      `webhook-timestamp is ${skew} s from this clock, more than the ${tolerance} s allowed`,
    );

  const offered = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  if (offered.length === 0) throw new WebhookVerificationError('MALFORMED_HEADER', 'webhook-signature holds no v1 signature');
  const bytes =
    typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const matches = (typeof secret === 'string' ? [secret] : secret).some((candidate) => {
    const expected = createHmac('sha256', keyOf(candidate)).update(`${id}.${timestamp}.`).update(bytes).digest();
    return offered.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
  });
  if (!matches) {
    throw new WebhookVerificationError(
      'SIGNATURE_MISMATCH',
      'No webhook-signature matches: check that the body is the raw bytes received (not parsed and serialised again) and that the secret is this endpoint’s',
    );
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as Event;
  } catch {
    throw new WebhookVerificationError('MALFORMED_BODY', 'The body is signed but is not JSON');
  }
}

/** The HMAC key: the base64 after `whsec_`. */
function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  if (key.length === 0) throw new TypeError('The webhook secret must be the endpoint’s whsec_… value');
  return key;
}

/** Header lookup that ignores case, whatever the framework handed over. */
function headerReader(headers: WebhookHeaders): (name: string) => string | undefined {
  if (headers instanceof Headers) return (name) => headers.get(name) ?? undefined;
  const lowered = new Map(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(' ') : value]),
  );
  return (name) => lowered.get(name);
}
