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

/**
 * Whether an endpoint receives each object's events in revision order. Its description is the
 * contract subscribers build on: docs/guides and RELIABILITY.md say the same.
 */
/**
 * Inline rather than a component: a defaulted reference becomes an allOf, which generated clients
 * (openapi-python-client) cannot take for an enum.
 */
export const WebhookOrdering = z.enum(['NONE', 'PER_OBJECT']).openapi({
  description:
    "NONE (the default): deliveries go out as events arrive, each on its own retry schedule. PER_OBJECT: deliveries of one object (one affiliate, sale, referral, coupon or promotional code) go out strictly in revision order: a delivery is not attempted until every earlier revision of that object to this endpoint has succeeded or failed for good (its retry schedule used up, or the endpoint disabled). A failing delivery holds back later ones of the same object only; other objects are not delayed. An event that arrives at the dispatcher before an earlier revision of its object waits for it up to WEBHOOK_ORDERING_GAP_WAIT (10 s by default), then goes out, since the missing revision may never come (a change that announces no event, or a type the endpoint does not subscribe to).",
});

export const WebhookEndpoint = z
  .object({
    id: Uuid,
    url: z.string(),
    eventTypes: z.array(z.string()),
    description: z.string().nullable(),
    active: z.boolean(),
    disabledReason: z.string().nullable(),
    ordering: WebhookOrdering,
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
    ordering: WebhookOrdering.default('NONE'),
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
    ordering: WebhookOrdering.optional(),
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
export type WebhookOrdering = z.infer<typeof WebhookOrdering>;
export type WebhookSecret = z.infer<typeof WebhookSecret>;
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;
export type EventTypeDescription = z.infer<typeof EventTypeDescription>;
