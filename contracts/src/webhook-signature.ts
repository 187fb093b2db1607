import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com), with node:crypto only, so that
 * subscribers can copy this file as it is. The signed content is `<webhook-id>.<webhook-timestamp>.<raw body>`;
 * the key is the base64 part of the `whsec_…` secret.
 */

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** How far a webhook-timestamp may be from the receiver's clock: replays of old messages are refused. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('The signing secret is empty or not base64');
  return key;
}

function signatureOf(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  return createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

/** `v1,<base64 HMAC-SHA256>` of one secret. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  return `v1,${signatureOf(secret, id, timestamp, body)}`;
}

/** The webhook-signature header: one `v1,` signature per secret, space separated (several during a rotation). */
export function webhookSignatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string | Buffer): string {
  return secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' ');
}

type HeaderSource = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const plain = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(plain).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : plain[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

export type VerifyWebhookOptions = { toleranceSeconds?: number; now?: Date };

/**
 * Checks a received webhook and returns its parsed body. `rawBody` must be the bytes exactly as
 * received: a body parsed to JSON and serialised again no longer matches the signature. `secrets`
 * may hold several secrets (yours during a rotation); any valid `v1` signature of any of them passes.
 */
export function verifyWebhook<Payload = unknown>(
  rawBody: string | Buffer,
  headers: HeaderSource,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Payload {
  const id = headerOf(headers, WEBHOOK_ID_HEADER);
  const timestampHeader = headerOf(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatureHeader = headerOf(headers, WEBHOOK_SIGNATURE_HEADER);
  if (!id || !timestampHeader || !signatureHeader) {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  }
  if (!/^\d{1,15}$/.test(timestampHeader)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const timestamp = Number(timestampHeader);
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(nowSeconds - timestamp) > tolerance) {
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance: the message is too old or too new');
  }
  const presented = signatureHeader
    .split(' ')
    .map((entry) => entry.split(','))
    .filter(([version, signature]) => version === 'v1' && signature)
    .map(([, signature]) => Buffer.from(signature as string));
  const valid = (typeof secrets === 'string' ? [secrets] : secrets).some((secret) => {
    const expected = Buffer.from(signatureOf(secret, id, timestamp, rawBody));
    return presented.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
  });
  if (!valid) throw new WebhookVerificationError('No webhook-signature matches the body');
  try {
    return JSON.parse(rawBody.toString()) as Payload;
  } catch {
    throw new WebhookVerificationError('The body is not JSON');
  }
}
