import { timingSafeEqual } from 'node:crypto';
import {
  signWebhook,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_TOLERANCE_SECONDS,
  type VerifyWebhookBody,
  type WebhookVerification,
  type WebhookVerificationFailure,
} from '@affiliate/contracts';
import { notFound } from '@affiliate/platform';
import type { z } from 'zod';
import type { Repositories } from '../data-access/repositories';
import { signingSecrets } from './signing';

const headerOf = (headers: Record<string, string>, name: string): string | undefined =>
  Object.entries(headers)
    .find(([key]) => key.toLowerCase() === name)?.[1]
    ?.trim();

/**
 * The most signatures one webhook-signature header may hold: a sender puts one per secret it signs
 * with (two during a rotation). More is MALFORMED_HEADER rather than work: the header may be 4 KB.
 */
export const MAX_PRESENTED_SIGNATURES = 10;

const failed = (failure: WebhookVerificationFailure): WebhookVerification => ({ valid: false, failure });

/** Compared in constant time, so the answer's timing tells nothing about the expected signature. */
function sameSignature(presented: string, expected: string): boolean {
  const left = Buffer.from(presented);
  const right = Buffer.from(expected);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * POST /webhook-endpoints/verify: why a receiver's check fails, in the order a receiver should fix
 * things. A signature that matches the body received is valid unless its timestamp is too far from
 * now. One that matches nothing is told apart by the body sent originally (the stored event of that
 * webhook-id): if it matches that one, the receiver changed the body (parsed and serialised it
 * again, most often); else it checks with another secret. The secrets are those that signed at the
 * message's timestamp (the previous one too during a rotation's overlap); only the verdict leaves.
 */
export async function verifyReceivedWebhook(
  repositories: Repositories,
  programId: string,
  request: z.infer<typeof VerifyWebhookBody>,
  now = new Date(),
): Promise<WebhookVerification> {
  const endpoint = await repositories.endpoints.byId(programId, request.webhookEndpointId);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${request.webhookEndpointId}`);

  const id = headerOf(request.headers, WEBHOOK_ID_HEADER);
  const timestampText = headerOf(request.headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatureHeader = headerOf(request.headers, WEBHOOK_SIGNATURE_HEADER);
  if (!id || !timestampText || !signatureHeader || !/^\d{1,15}$/.test(timestampText)) return failed('MALFORMED_HEADER');
  const presented = signatureHeader.split(' ').filter((entry) => /^v1,[A-Za-z0-9+/]+={0,2}$/.test(entry));
  if (presented.length === 0 || presented.length > MAX_PRESENTED_SIGNATURES) return failed('MALFORMED_HEADER');

  const timestamp = Number(timestampText);
  const secrets = signingSecrets(endpoint, new Date(timestamp * 1000));
  // One HMAC per secret and body (the body may be 1 MB), each compared with every signature presented.
  const signs = (body: string) =>
    secrets.some((secret) => {
      const expected = signWebhook(secret, id, timestamp, body);
      return presented.some((signature) => sameSignature(signature, expected));
    });

  if (signs(request.body)) {
    const skewSeconds = Math.abs(Math.floor(now.getTime() / 1000) - timestamp);
    return skewSeconds > WEBHOOK_TOLERANCE_SECONDS ? failed('TIMESTAMP_SKEW') : { valid: true, failure: null };
  }
  const original = await repositories.events.byId(programId, id);
  if (original && original.body !== request.body && signs(original.body)) return failed('BODY_ALTERED');
  return failed('WRONG_SECRET');
}
