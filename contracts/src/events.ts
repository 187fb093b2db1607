import { DateTime, Uuid } from './common';
import { z } from './zod';

export const EVENT_FAMILIES = ['affiliate', 'referral', 'sale', 'coupon', 'promocode'] as const;
export const EVENT_ACTIONS = ['created', 'updated', 'deleted'] as const;

/** The public event types of the spec (five families × created, updated, deleted): the only ones ever delivered to subscribers. */
export const PUBLIC_EVENT_TYPES = [
  'affiliate.created',
  'affiliate.updated',
  'affiliate.deleted',
  'referral.created',
  'referral.updated',
  'referral.deleted',
  'sale.created',
  'sale.updated',
  'sale.deleted',
  'coupon.created',
  'coupon.updated',
  'coupon.deleted',
  'promocode.created',
  'promocode.updated',
  'promocode.deleted',
] as const;

/** Events between components only; they share the bus but never reach a webhook endpoint. */
export const INTERNAL_EVENT_TYPES = ['program.created', 'program.updated', 'program.deleted'] as const;

export const PublicEventType = z.enum(PUBLIC_EVENT_TYPES).openapi('EventType', {
  description: 'A public event type: family (affiliate, referral, sale, coupon, promocode) and action (created, updated, deleted)',
});
export const InternalEventType = z.enum(INTERNAL_EVENT_TYPES);
export const EVENT_TYPES = [...PUBLIC_EVENT_TYPES, ...INTERNAL_EVENT_TYPES] as const;
export const EventType = z.enum(EVENT_TYPES);

export type PublicEventType = z.infer<typeof PublicEventType>;
export type InternalEventType = z.infer<typeof InternalEventType>;
export type EventType = z.infer<typeof EventType>;

export function isPublicEventType(type: string): type is PublicEventType {
  return (PUBLIC_EVENT_TYPES as readonly string[]).includes(type);
}

/** What travels on the bus: `data` is the object's full current state, or `{ id }` for `*.deleted`. */
export const EventEnvelope = z
  .object({
    id: Uuid,
    type: EventType,
    programId: Uuid,
    occurredAt: DateTime,
    data: z.record(z.unknown()),
    /**
     * The W3C trace context (`traceparent`, `tracestate`) of the request that caused the event,
     * stored with it in the outbox so that the relay's publish, whenever it happens, continues that
     * trace. Never delivered to subscribers; absent on events stored before tracing.
     */
    headers: z.record(z.string()).optional(),
    /**
     * The object's revision after the change the event announces (0 when created, one more per
     * change since), stamped by the store that wrote it. Absent on events stored before revisions
     * were carried, and on events about an object other than the one written.
     */
    revision: z.number().int().min(0).optional(),
    /** On `*.updated`: the top-level fields of `data` that the change altered, with their values before it. */
    previousAttributes: z.record(z.unknown()).optional(),
  })
  .openapi('EventEnvelope');

export type EventEnvelope<Data = Record<string, unknown>> = Omit<z.infer<typeof EventEnvelope>, 'data'> & { data: Data };

export const DeletedEventData = z
  .object({ id: z.string().openapi({ description: 'The id of the deleted object' }) })
  .strict()
  .openapi({ description: 'Only the id of the deleted object' });

/** The object's revision in a webhook body: what ordering and de-duplication by subscribers read. */
export const WebhookRevision = z.number().int().min(0).openapi({
  description:
    "The object's revision after this change: 0 when it was created, one more with each change since (changes that announce no event count too, so a subscriber may see gaps). Deliveries to an endpoint with ordering PER_OBJECT arrive in this order for each object, except a revision that reached the platform after the wait for it (it arrives late) and backfills, replays, re-sends and recoveries, which are outside the order; a subscriber of an unordered endpoint can discard an event whose revision is not above the last one it applied. Absent on events recorded before revisions existed.",
});

/** The changed fields of an `*.updated` webhook, before the change (as Stripe's previous_attributes). */
export const WebhookPreviousAttributes = z.record(z.unknown()).openapi({
  description:
    'On *.updated only: the top-level fields of data that this change altered, each with its value before the change (a field that did not exist before is null). Fields that did not change are not listed. Absent on events recorded before it existed.',
});

/** The body a webhook subscriber receives. */
export const WebhookPayload = z
  .object({
    id: Uuid.openapi({
      description: 'The event id, the same as the webhook-id header: the same on every retry, so receivers drop duplicates by it',
    }),
    event: PublicEventType,
    createdAt: DateTime.openapi({ description: 'When the event happened' }),
    data: z.record(z.unknown()).openapi({ description: "The object's full current state, or only its id for *.deleted" }),
    revision: WebhookRevision.optional(),
    previousAttributes: WebhookPreviousAttributes.optional(),
  })
  .openapi('WebhookPayload', { description: 'The body a webhook endpoint receives' });

export type WebhookPayload = z.infer<typeof WebhookPayload>;
