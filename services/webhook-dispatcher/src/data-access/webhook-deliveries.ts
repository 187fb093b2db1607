import { createHash } from 'node:crypto';
import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery } from '@affiliate/contracts';
import { Schema, type Connection, type Model } from 'mongoose';

export type StoredAttempt = {
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  responseBytes: number | null;
  error: string | null;
};

export type WebhookDeliveryDocument = {
  /** Derived from (eventId, endpointId): the unique key that makes fan-out idempotent. */
  _id: string;
  programId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The request body, serialised once, so that every attempt sends the same bytes. */
  body: string;
  status: DeliveryStatus;
  attempts: StoredAttempt[];
  /** Attempts made by the schedule (manual re-sends do not count): the position in the retry schedule. */
  scheduledAttempts: number;
  nextAttemptAt: Date | null;
  /** Lease of the process sending it right now; a crashed sender's lease simply runs out. */
  lockedUntil: Date;
  lockToken: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** Attempts kept per delivery: the schedule's ten plus a generous number of manual re-sends. */
export const KEPT_ATTEMPTS = 50;

const attemptSchema = new Schema<StoredAttempt>(
  {
    at: { type: Date, required: true },
    statusCode: { type: Number, default: null },
    latencyMs: { type: Number, required: true },
    responseExcerpt: { type: String, default: null },
    responseBytes: { type: Number, default: null },
    error: { type: String, default: null },
  },
  { _id: false },
);

const schema = new Schema<WebhookDeliveryDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    endpointId: { type: String, required: true },
    eventId: { type: String, required: true },
    eventType: { type: String, required: true },
    body: { type: String, required: true },
    status: { type: String, required: true },
    attempts: { type: [attemptSchema], default: [] },
    scheduledAttempts: { type: Number, default: 0 },
    nextAttemptAt: { type: Date, default: null },
    lockedUntil: { type: Date, required: true },
    lockToken: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ endpointId: 1, status: 1, createdAt: 1 });

export function webhookDeliveryModel(connection: Connection): Model<WebhookDeliveryDocument> {
  return connection.model<WebhookDeliveryDocument>('WebhookDelivery', schema, 'webhook_deliveries');
}

/** A UUID (version 5 layout) from the event and endpoint ids: the same pair always gives the same id. */
export function deliveryIdOf(eventId: string, endpointId: string): string {
  const hash = createHash('sha256').update(`${eventId}:${endpointId}`).digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function toDeliveryAttempt(attempt: StoredAttempt): DeliveryAttempt {
  return {
    at: attempt.at.toISOString(),
    statusCode: attempt.statusCode,
    latencyMs: attempt.latencyMs,
    responseExcerpt: attempt.responseExcerpt,
    responseBytes: attempt.responseBytes ?? null,
    error: attempt.error,
  };
}

export function toWebhookDelivery(delivery: WebhookDeliveryDocument): WebhookDelivery {
  return {
    id: delivery._id,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts.map(toDeliveryAttempt),
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
    createdAt: delivery.createdAt.toISOString(),
    updatedAt: delivery.updatedAt.toISOString(),
  };
}
