import { DateTime, httpUrl, ListQuery, ShortText, Uuid } from './common';
import { PUBLIC_EVENT_TYPES, PublicEventType, WebhookPayload } from './events';
import { z } from './zod';

/** A public event type, or a wildcard over one family (`sale.*`) or everything (`*`). */
export const EventTypeSubscription = z
  .string()
  .refine(
    (value) =>
      value === '*' ||
      (PUBLIC_EVENT_TYPES as readonly string[]).includes(value) ||
      PUBLIC_EVENT_TYPES.some((type) => `${type.split('.')[0]}.*` === value),
    (value) => ({ message: `unknown event type "${value}": use one of ${PUBLIC_EVENT_TYPES.join(', ')}, a family wildcard such as sale.*, or *` }),
  );

const WebhookUrl = httpUrl('url');

export const WebhookEndpoint = z
  .object({
    id: Uuid,
    url: z.string(),
    eventTypes: z.array(z.string()),
    description: z.string().nullable(),
    active: z.boolean(),
    disabledReason: z.string().nullable(),
    secret: z.string().optional(),
    previousSecretExpiresAt: DateTime.nullable().openapi({ description: 'After a rotation, the previous secret keeps signing beside the new one until then; null outside an overlap' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('WebhookEndpoint');

export const CreateWebhookEndpointBody = z
  .object({
    url: WebhookUrl,
    eventTypes: z.array(EventTypeSubscription).min(1).max(20),
    description: ShortText.optional(),
    active: z.boolean().default(true),
    backfillSince: DateTime.optional().openapi({ description: 'Also deliver the stored events since then (within the event retention) that match eventTypes, each once, with their original ids' }),
  })
  .strict()
  .openapi('CreateWebhookEndpointBody');

export const UpdateWebhookEndpointBody = z
  .object({
    webhookEndpointId: Uuid,
    url: WebhookUrl.optional(),
    eventTypes: z.array(EventTypeSubscription).min(1).max(20).optional(),
    description: ShortText.nullable().optional(),
    active: z.boolean().optional(),
    rotateSecret: z.boolean().optional(),
  })
  .strict()
  .openapi('UpdateWebhookEndpointBody');

export const DeleteWebhookEndpointBody = z.object({ webhookEndpointId: Uuid }).strict();

export const DeliveryStatus = z.enum(['pending', 'succeeded', 'failed']);

export const DeliveryAttempt = z.object({
  at: DateTime,
  statusCode: z.number().int().nullable(),
  latencyMs: z.number(),
  responseExcerpt: z.string().nullable().openapi({ description: "Up to 50 KB of the subscriber's answer; null for a private address (allowed only explicitly), whose answer is never shown" }),
  responseBytes: z.number().int().nullable().openapi({ description: 'Size of the answer read, at most 50 KB' }),
  error: z.string().nullable(),
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .nullable()
    .optional()
    .openapi({ description: "The OpenTelemetry trace the attempt belongs to: the trace of the request that caused the event (a caller's W3C `traceparent` is honoured), or of the re-send request; null for attempts recorded before tracing" }),
});

export const WebhookDelivery = z
  .object({
    id: Uuid,
    endpointId: Uuid,
    eventId: Uuid,
    eventType: z.string(),
    status: DeliveryStatus,
    attempts: z.array(DeliveryAttempt),
    nextAttemptAt: DateTime.nullable(),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('WebhookDelivery');

export const RetryDeliveryBody = z.object({ deliveryId: Uuid }).strict();

export const TestWebhookEndpointBody = z.object({ webhookEndpointId: Uuid }).strict().openapi('TestWebhookEndpointBody');

/** Re-sends every failed delivery of one endpoint created in [since, until]. */
export const RecoverDeliveriesBody = z
  .object({ webhookEndpointId: Uuid, since: DateTime, until: DateTime.optional() })
  .strict()
  .openapi('RecoverDeliveriesBody');

export const WebhookEndpointQuery = ListQuery.extend({ id: z.string().max(100).optional() }).strict();

export const WebhookSecretQuery = z.object({ webhookEndpointId: Uuid }).strict();

/** The signing secret on demand (as Svix's endpoint secret), and the end of a rotation's overlap. */
export const WebhookSecret = z
  .object({ webhookEndpointId: Uuid, secret: z.string(), previousSecretExpiresAt: DateTime.nullable() })
  .openapi('WebhookSecret');

export const WebhookDeliveryQuery = ListQuery.extend({
  endpointId: Uuid.optional(),
  eventId: Uuid.optional(),
  status: DeliveryStatus.optional(),
  eventType: PublicEventType.optional(),
}).strict();

/** The outcome of one send: a delivery attempt, or the answer to a test ping. */
export const WebhookTestResult = DeliveryAttempt.extend({ succeeded: z.boolean(), webhookId: z.string() }).openapi('WebhookTestResult');

/** One entry of GET /event-types: what fires it, the JSON Schema of its payload and an example. */
export const EventTypeDescription = z
  .object({
    type: PublicEventType,
    description: z.string(),
    schema: z.record(z.unknown()),
    example: WebhookPayload,
  })
  .openapi('EventTypeDescription');

export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;
export type WebhookSecret = z.infer<typeof WebhookSecret>;
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;
export type EventTypeDescription = z.infer<typeof EventTypeDescription>;
