import { randomBytes } from 'node:crypto';
import {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  webhookSignatureHeader,
} from '@affiliate/contracts';
import type { WebhookEndpointDocument } from '../data-access/webhook-endpoints';

/** whsec_ + base64 of 32 random bytes (Standard Webhooks asks for 24 to 64). */
export function newSigningSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

type Signer = Pick<WebhookEndpointDocument, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>;

/** The current secret, and during a rotation's overlap the previous one too. */
export function signingSecrets(endpoint: Signer, now: Date): string[] {
  const previousValid =
    endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now;
  return previousValid ? [endpoint.secret, endpoint.previousSecret as string] : [endpoint.secret];
}

/** Headers of one attempt: the id stays the event's on every attempt; the timestamp is the attempt's. */
export function webhookHeaders(endpoint: Signer, webhookId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'affiliate-platform-webhooks/1.0',
    [WEBHOOK_ID_HEADER]: webhookId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_SIGNATURE_HEADER]: webhookSignatureHeader(signingSecrets(endpoint, now), webhookId, timestamp, body),
  };
}
