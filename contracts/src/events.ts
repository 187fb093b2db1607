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

export const PublicEventType = z
  .enum(PUBLIC_EVENT_TYPES)
  .openapi('EventType', { description: 'A public event type: family (affiliate, referral, sale, coupon, promocode) and action (created, updated, deleted)' });
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
  })
  .openapi('EventEnvelope');

export type EventEnvelope<Data = Record<string, unknown>> = Omit<z.infer<typeof EventEnvelope>, 'data'> & { data: Data };

export const DeletedEventData = z.object({ id: z.string().openapi({ description: 'The id of the deleted object' }) }).strict().openapi({ description: 'Only the id of the deleted object' });

/** The body a webhook subscriber receives. */
export const WebhookPayload = z
  .object({
    id: Uuid.openapi({ description: 'The event id, the same as the webhook-id header: the same on every retry, so receivers drop duplicates by it' }),
    event: PublicEventType,
    createdAt: DateTime.openapi({ description: 'When the event happened' }),
    data: z.record(z.unknown()).openapi({ description: "The object's full current state, or only its id for *.deleted" }),
  })
  .openapi('WebhookPayload', { description: 'The body a webhook endpoint receives' });

export type WebhookPayload = z.infer<typeof WebhookPayload>;
