import { dateRange, DateTime, httpUrl, ListQuery, ShortText, Uuid } from './common';
import { PUBLIC_EVENT_TYPES, PublicEventType, WebhookPayload } from './events';
import { z } from './zod';

/** A public event type, or a wildcard over one family (`sale.*`) or everything (`*`). */
export const EventTypeSubscription = z.string().refine(
  (value) =>
    value === '*' ||
    (PUBLIC_EVENT_TYPES as readonly string[]).includes(value) ||
    PUBLIC_EVENT_TYPES.some((type) => `${type.split('.')[0]}.*` === value),
  (value) => ({
    message: `unknown event type "${value}": use one of ${PUBLIC_EVENT_TYPES.join(', ')}, a family wildcard such as sale.*, or *`,
  }),
);

const WebhookUrl = httpUrl('url');

/**
 * Inline rather than a component: a defaulted reference becomes an allOf, which generated clients
 * (openapi-python-client) cannot take for an enum.
 */
export const WebhookOrdering = z.enum(['NONE', 'PER_OBJECT']).openapi({
  description:
    'NONE (the default): deliveries go out as events arrive, each on its own retry schedule. PER_OBJECT: deliveries of one object (one affiliate, sale, referral, coupon or promotional code) go out in revision order: a delivery is not attempted until every earlier revision of that object to this endpoint has succeeded or failed for good (its retry schedule used up, or the endpoint disabled). A failing delivery holds back later ones of the same object only; other objects are not delayed. Two exceptions, which the revision lets a subscriber tell: an event that arrives at the dispatcher before an earlier revision of its object waits for it up to WEBHOOK_ORDERING_GAP_WAIT (10 s by default), then goes out, since the missing revision may never come (a change that announces no event, or a type the endpoint does not subscribe to), and that revision, if it comes later, is delivered late; and backfilled events, replays, manual re-sends and recovered deliveries take no place in the order: they hold back nothing and may arrive after later revisions (a backfill runs beside the live deliveries).',
});

const EVENT_TYPES =
  'The event types delivered (1 to 20): a type such as sale.created, a family wildcard such as sale.*, or * for every type';

export const WebhookEndpoint = z
  .object({
    id: Uuid.openapi({ description: "The endpoint's id" }),
    url: z.string().openapi({ description: 'Where the events are POSTed' }),
    eventTypes: z.array(z.string()).openapi({ description: EVENT_TYPES }),
    description: z.string().nullable().openapi({ description: 'Your note about the endpoint' }),
    active: z.boolean().openapi({
      description: 'Whether events are delivered to it: false when paused, or disabled after failing too long (see disabledReason)',
    }),
    disabledReason: z.string().nullable().openapi({
      description:
        'Why the platform disabled it (e.g. it answered 410, or failed for too long); null when it did not. PUT active: true clears it',
    }),
    ordering: WebhookOrdering,
    secret: z.string().optional().openapi({
      description:
        'The signing secret (whsec_…): only in the answers of POST and of PUT with rotateSecret; else GET /webhook-endpoints/secret',
    }),
    previousSecretExpiresAt: DateTime.nullable().openapi({
      description: 'After a rotation, the previous secret keeps signing beside the new one until then; null outside an overlap',
    }),
    createdAt: DateTime.openapi({ description: 'When the endpoint was created' }),
    updatedAt: DateTime.openapi({ description: 'When it last changed' }),
  })
  .openapi('WebhookEndpoint', { description: 'A URL that receives signed events of the types it subscribes to' });

export const CreateWebhookEndpointBody = z
  .object({
    url: WebhookUrl.openapi({
      description: 'Where to POST the events: an http or https URL of a public address (at most 2000 characters)',
    }),
    eventTypes: z.array(EventTypeSubscription).min(1).max(20).openapi({ description: EVENT_TYPES }),
    description: ShortText.optional().openapi({ description: 'Your note about the endpoint' }),
    active: z.boolean().default(true).openapi({ description: 'Whether events are delivered to it (default true)' }),
    backfillSince: DateTime.optional().openapi({
      description:
        'Also deliver the stored events since then (within the event retention) that match eventTypes, each once, with their original ids',
    }),
    ordering: WebhookOrdering.default('NONE'),
  })
  .strict()
  .openapi('CreateWebhookEndpointBody');

export const UpdateWebhookEndpointBody = z
  .object({
    webhookEndpointId: Uuid.openapi({ description: 'The endpoint to change' }),
    url: WebhookUrl.optional().openapi({ description: 'A new URL (http or https, a public address)' }),
    eventTypes: z
      .array(EventTypeSubscription)
      .min(1)
      .max(20)
      .optional()
      .openapi({ description: `${EVENT_TYPES}; replaces the list` }),
    description: ShortText.nullable().optional().openapi({ description: 'Your note about the endpoint; null clears it' }),
    active: z
      .boolean()
      .optional()
      .openapi({ description: 'false pauses deliveries; true resumes them, also for an endpoint the platform disabled' }),
    ordering: WebhookOrdering.optional(),
    rotateSecret: z.boolean().optional().openapi({
      description: 'true: a new signing secret, in this answer; the previous one keeps signing beside it until previousSecretExpiresAt',
    }),
  })
  .strict()
  .openapi('UpdateWebhookEndpointBody');

export const DeleteWebhookEndpointBody = z.object({ webhookEndpointId: Uuid.openapi({ description: 'The endpoint to delete' }) }).strict();

export const DeliveryStatus = z.enum(['pending', 'succeeded', 'failed']);

export const DeliveryAttempt = z.object({
  at: DateTime.openapi({ description: 'When the attempt was made' }),
  statusCode: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The subscriber's HTTP status; null when there was no answer (a timeout, a refused connection)" }),
  latencyMs: z.number().openapi({ description: 'Milliseconds until the answer, or until the attempt gave up' }),
  responseExcerpt: z.string().nullable().openapi({
    description:
      "Up to 50 KB of the subscriber's answer; null for a private address (allowed only explicitly), whose answer is never shown",
  }),
  responseBytes: z.number().int().nullable().openapi({ description: 'Size of the answer read, at most 50 KB' }),
  error: z
    .string()
    .nullable()
    .openapi({ description: 'Why the attempt failed without an HTTP answer (timeout, DNS, connection); null otherwise' }),
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .nullable()
    .optional()
    .openapi({
      description:
        "The OpenTelemetry trace the attempt belongs to: the trace of the request that caused the event (a caller's W3C `traceparent` is honoured), or of the re-send request; null for attempts recorded before tracing, and where no trace was started: a request without a `traceparent` to a system that exports no spans",
    }),
});

export const WebhookDelivery = z
  .object({
    id: Uuid.openapi({ description: "The delivery's id" }),
    endpointId: Uuid.openapi({ description: 'The endpoint it goes to' }),
    eventId: Uuid.openapi({ description: "The event delivered: the payload's id and the webhook-id header" }),
    eventType: z.string().openapi({ description: 'The event type, e.g. sale.created' }),
    status: DeliveryStatus.openapi({
      description:
        'pending: not delivered yet, more attempts scheduled; succeeded: a 2xx answer; failed: every attempt failed, or the endpoint was disabled or deleted',
    }),
    attempts: z.array(DeliveryAttempt).openapi({ description: 'Every attempt, oldest first' }),
    nextAttemptAt: DateTime.nullable().openapi({ description: 'When the next attempt is scheduled; null when none is' }),
    createdAt: DateTime.openapi({ description: 'When the delivery was created (when the event was fanned out)' }),
    updatedAt: DateTime.openapi({ description: 'When it last changed' }),
  })
  .openapi('WebhookDelivery', { description: 'One event sent to one endpoint, with every attempt' });

export const RetryDeliveryBody = z.object({ deliveryId: Uuid.openapi({ description: 'The delivery to send again' }) }).strict();

export const TestWebhookEndpointBody = z
  .object({ webhookEndpointId: Uuid.openapi({ description: 'The endpoint to ping' }) })
  .strict()
  .openapi('TestWebhookEndpointBody');

/** Re-sends every failed delivery of one endpoint created in [since, until]. */
export const RecoverDeliveriesBody = z
  .object({
    webhookEndpointId: Uuid.openapi({ description: 'The endpoint whose failed deliveries are sent again' }),
    since: DateTime.openapi({ description: 'Deliveries created from then on' }),
    until: DateTime.optional().openapi({ description: 'Deliveries created until then (default now)' }),
  })
  .strict()
  .openapi('RecoverDeliveriesBody');

export const WebhookEndpointQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'An endpoint id: that endpoint' }),
}).strict();

export const WebhookSecretQuery = z
  .object({ webhookEndpointId: Uuid.openapi({ description: 'The endpoint whose secret to reveal' }) })
  .strict();

/** The signing secret on demand (as Svix's endpoint secret), and the end of a rotation's overlap. */
export const WebhookSecret = z
  .object({
    webhookEndpointId: Uuid.openapi({ description: 'The endpoint' }),
    secret: z.string().openapi({
      description: 'The signing secret (whsec_…): the base64 after the prefix is the HMAC-SHA256 key of the webhook-signature header',
    }),
    previousSecretExpiresAt: DateTime.nullable().openapi({
      description: 'After a rotation, until when the previous secret also signs; null outside an overlap',
    }),
  })
  .openapi('WebhookSecret', { description: "An endpoint's signing secret" });

export const WebhookDeliveryQuery = ListQuery.extend({
  endpointId: Uuid.optional().openapi({ description: 'Only the deliveries to this endpoint' }),
  eventId: Uuid.optional().openapi({ description: 'Only the deliveries of this event' }),
  status: DeliveryStatus.optional().openapi({ description: 'Only deliveries of this status' }),
  eventType: PublicEventType.optional().openapi({ param: { description: 'Only deliveries of events of this type' } }),
  ...dateRange('createdAt', 'creation (when the event was fanned out to the endpoint)'),
}).strict();

/** The outcome of one send: a delivery attempt, or the answer to a test ping. */
export const WebhookTestResult = DeliveryAttempt.extend({
  succeeded: z.boolean().openapi({ description: 'Whether the endpoint answered 2xx' }),
  webhookId: z.string().openapi({ description: 'The webhook-id header the ping carried' }),
}).openapi('WebhookTestResult', { description: 'What happened when the ping was sent' });

/** One entry of GET /event-types: what fires it, the JSON Schema of its payload and an example. */
export const EventTypeDescription = z
  .object({
    type: PublicEventType,
    description: z.string().openapi({ description: 'When it fires' }),
    schema: z.record(z.unknown()).openapi({ description: 'The JSON Schema of its webhook payload' }),
    example: WebhookPayload,
  })
  .openapi('EventTypeDescription', { description: 'One public event type: when it fires, the JSON Schema of its payload and an example' });

export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;
export type WebhookOrdering = z.infer<typeof WebhookOrdering>;
export type WebhookSecret = z.infer<typeof WebhookSecret>;
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;
export type EventTypeDescription = z.infer<typeof EventTypeDescription>;
