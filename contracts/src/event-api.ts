import { DateTime, ListQuery, Uuid } from './common';
import { PUBLIC_EVENT_TYPES, PublicEventType } from './events';
import { z } from './zod';

/** Days the events are kept for GET /events, backfills and replays unless the operator sets another (EVENT_RETENTION). */
export const DEFAULT_EVENT_RETENTION_DAYS = 30;

/** Events one replay may queue: a wider window is refused, so one request stays bounded work. */
export const MAX_REPLAYED_EVENTS = 1000;

/**
 * GET /events: the program's public events, newest first. `createdAt[gte]`/`createdAt[lt]` bound the
 * time (the same syntax as the other lists' date filters); `objectId` is the `data.id` of the event.
 */
export const EventQuery = ListQuery.extend({
  id: Uuid.optional().openapi({ param: { description: 'One event by id (the webhook-id of its deliveries)' } }),
  type: PublicEventType.optional().openapi({ param: { description: 'Only events of this type' } }),
  objectId: z
    .string()
    .max(100)
    .optional()
    .openapi({ param: { description: 'The id of the object the event is about (its data.id)' } }),
  'createdAt[gte]': DateTime.optional().openapi({ param: { description: 'Events at or after this instant' } }),
  'createdAt[lt]': DateTime.optional().openapi({ param: { description: 'Events before this instant' } }),
}).strict();

/** Sends the stored events of a window to one endpoint again, with their original ids. */
export const ReplayDeliveriesBody = z
  .object({
    webhookEndpointId: Uuid.openapi({ description: 'The endpoint to send them to' }),
    since: DateTime.openapi({ description: 'Start of the window (inclusive): events created at or after it' }),
    until: DateTime.optional().openapi({ description: 'End of the window (exclusive); now when absent' }),
    eventTypes: z
      .array(PublicEventType)
      .min(1)
      .max(PUBLIC_EVENT_TYPES.length)
      .optional()
      .openapi({ description: "Only these of the endpoint's subscribed types; all of them when absent" }),
    includeSucceeded: z
      .boolean()
      .default(false)
      .openapi({ description: 'Also send events this endpoint has already received (answered 2xx)' }),
  })
  .strict()
  .openapi('ReplayDeliveriesBody');

export const ReplayResult = z
  .object({ queued: z.number().int().openapi({ description: 'Deliveries put on the schedule by this replay' }) })
  .openapi('ReplayResult');

export const WEBHOOK_VERIFICATION_FAILURES = ['TIMESTAMP_SKEW', 'BODY_ALTERED', 'WRONG_SECRET', 'MALFORMED_HEADER'] as const;

/** A received webhook as the receiver saw it: its headers and the body exactly as read. */
export const VerifyWebhookBody = z
  .object({
    webhookEndpointId: Uuid.openapi({ description: 'The endpoint whose secret signed the webhook' }),
    headers: z
      .record(z.string().max(4096))
      .refine((headers) => Object.keys(headers).length <= 100, 'headers: at most 100 headers')
      .openapi({ description: 'The headers received (webhook-id, webhook-timestamp, webhook-signature; others are ignored)' }),
    body: z.string().max(1_000_000).openapi({ description: 'The raw body received, as text' }),
  })
  .strict()
  .openapi('VerifyWebhookBody');

/** Whether the signature holds and, if not, why; the secret itself is never part of the answer. */
export const WebhookVerification = z
  .object({
    valid: z.boolean().openapi({ description: 'true when the signature holds for this body, within the timestamp tolerance' }),
    failure: z.union([z.enum(WEBHOOK_VERIFICATION_FAILURES), z.null()]).openapi({
      description:
        "MALFORMED_HEADER: a webhook header is missing or unreadable, or webhook-signature holds more than 10 signatures; WRONG_SECRET: no signature matches with this endpoint's secret; BODY_ALTERED: the signature matches the body originally sent, so the body was changed or re-serialized; TIMESTAMP_SKEW: the signature matches but webhook-timestamp is more than 5 minutes from now; null when valid",
    }),
  })
  .openapi('WebhookVerification');

export type WebhookVerificationFailure = (typeof WEBHOOK_VERIFICATION_FAILURES)[number];
export type WebhookVerification = z.infer<typeof WebhookVerification>;
