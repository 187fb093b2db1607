import { Affiliate } from './affiliate';
import { DateTime, Uuid } from './common';
import { Coupon, PromotionalCode } from './coupon';
import * as examples from './event-examples';
import {
  DeletedEventData,
  EVENT_TYPES,
  WebhookPreviousAttributes,
  WebhookRevision,
  type EventType,
  type PublicEventType,
  type WebhookPayload,
} from './events';
import { Program } from './program';
import { Referral } from './referral';
import { ExpandedSale, Sale } from './sale';
import { z } from './zod';

/**
 * program.created / program.updated data as consumers accept it: events published before the tracking
 * settings existed lack them, and such a program has TRACKING_DEFAULTS (the gateway always sends them now).
 */
export const ProgramEventData = Program.partial({
  allowedOrigins: true,
  attributionWindowDays: true,
  attributionModel: true,
  clickDedupSeconds: true,
  maxWebhookEndpoints: true,
  riskActions: true,
  maxAutoApprovedCommission: true,
  minClickToConversionSeconds: true,
  reportingCurrency: true,
  slug: true,
  signup: true,
});

/**
 * Referral and sale data as consumers accept it: events published before `attribution` or `risk`
 * existed lack them (during a rolling upgrade, or left in an outbox or a queue), and a consumer must
 * not dead-letter them. The documented payload (`data`) always has both; what was published without
 * them is delivered as sent (a referral or sale stored without risk reads as no signals, FLAG).
 */
const olderFields = { attribution: true, risk: true } as const;
const AcceptedReferral = Referral.partial(olderFields);
const AcceptedSale = Sale.partial(olderFields);
const AcceptedExpandedSale = ExpandedSale.extend({ referral: z.union([AcceptedReferral, z.null()]) }).partial(olderFields);

type CatalogueEntry = {
  /** What `data` holds: the object's full current state, or `{ id }` once it is deleted. */
  data: z.ZodTypeAny;
  /** What consumers accept, when it is more than `data` (events of an older shape). */
  accepts?: z.ZodTypeAny;
  /** When it fires, in the specification's words. */
  firesWhen: string;
};

/**
 * Every event type in one place: its data schema and when it fires (and, for the public ones, an
 * example). The OpenAPI webhooks section, GET /event-types, the producers' types (createEvent), the
 * consumers' parsing (EventBus) and the tests all read it; nothing else lists the types.
 */
export const EVENT_CATALOGUE = {
  'affiliate.created': {
    data: Affiliate,
    firesWhen: 'An affiliate record exists, from any source. It fires on creation, not approval: check status.',
  },
  'affiliate.updated': {
    data: Affiliate,
    firesWhen:
      'Profile edit, status change (approval, rejection), payout or commission change, and creation, edit or deletion of referral links.',
  },
  'affiliate.deleted': { data: DeletedEventData, firesWhen: 'An affiliate is removed. The body carries only the id.' },
  'referral.created': { data: Referral, accepts: AcceptedReferral, firesWhen: 'A tracked click becomes an identified customer.' },
  'referral.updated': {
    data: Referral,
    accepts: AcceptedReferral,
    firesWhen: 'Edits to the referral and subscription status changes; the current state is in status.',
  },
  'referral.deleted': { data: DeletedEventData, firesWhen: 'A referral is removed. The body carries only the id.' },
  'sale.created': {
    data: ExpandedSale,
    accepts: AcceptedExpandedSale,
    firesWhen:
      'A payment is attributed to an affiliate and commission is calculated; once per attributed payment. Affiliate and referral are expanded.',
  },
  'sale.updated': {
    data: Sale,
    accepts: AcceptedSale,
    firesWhen: 'Amount or commission recalculated, or the sale rolled into a payout (see payoutCreated and payoutId in commissions).',
  },
  'sale.deleted': { data: DeletedEventData, firesWhen: 'A sale is reversed or removed. The body carries only the id.' },
  'coupon.created': { data: Coupon, firesWhen: 'A coupon is created. The payload includes its promotional codes.' },
  'coupon.updated': { data: Coupon, firesWhen: 'A coupon is changed. The payload includes its promotional codes.' },
  'coupon.deleted': { data: DeletedEventData, firesWhen: 'A coupon and, by cascade, its codes are deleted. The body carries only the id.' },
  'promocode.created': { data: PromotionalCode, firesWhen: 'A promotional code is issued. The payload includes the parent coupon.' },
  'promocode.updated': {
    data: PromotionalCode,
    firesWhen: 'A promotional code is edited or retired. The payload includes the parent coupon.',
  },
  'promocode.deleted': { data: DeletedEventData, firesWhen: 'A promotional code is removed. The body carries only the id.' },
  'program.created': {
    data: ProgramEventData,
    firesWhen: 'An operator created a program (between components only; never delivered to subscribers).',
  },
  'program.updated': { data: ProgramEventData, firesWhen: 'An operator changed a program (between components only).' },
  'program.deleted': { data: DeletedEventData, firesWhen: 'An operator deleted a program (between components only).' },
} as const satisfies Record<EventType, CatalogueEntry>;

/** The data an event of this type carries, as the producers must build it and the consumers receive it. */
export type EventData<Type extends EventType> = z.infer<(typeof EVENT_CATALOGUE)[Type]['data']>;

export const eventDataSchemaOf = (type: EventType): z.ZodTypeAny => EVENT_CATALOGUE[type].data;

/** What a consumer accepts as the data of this type: the documented data, or an older shape of it. */
export const acceptedEventDataSchemaOf = (type: EventType): z.ZodTypeAny => {
  const entry: CatalogueEntry = EVENT_CATALOGUE[type];
  return entry.accepts ?? entry.data;
};

/**
 * The whole webhook body of one public type: the specification's four fields, the object's
 * `revision`, and on `*.updated` the `previousAttributes` of the change (both absent on events
 * recorded before they existed). Not strict: a body may gain fields (as it gained `revision`), and a
 * subscriber validating with this schema must keep accepting it (docs/guides/webhooks.md, Versioning).
 */
export function payloadSchemaOf(type: PublicEventType) {
  const envelope = {
    id: Uuid.openapi({
      description: 'The event id, the same as the webhook-id header: the same on every retry, so receivers drop duplicates by it',
    }),
    event: z.literal(type).openapi({ description: 'The event type' }),
    createdAt: DateTime.openapi({ description: 'When the event happened' }),
    // No description of its own: the object's component has one, and a description here would become that component's (zod-to-openapi takes a component's metadata from its first use).
    // A *.deleted body's data is only the id today; a field added to it later must not break a subscriber either.
    data: type.endsWith('.deleted') ? DeletedEventData.strip() : eventDataSchemaOf(type),
    revision: WebhookRevision.optional(),
  };
  return type.endsWith('.updated')
    ? z.object({ ...envelope, previousAttributes: WebhookPreviousAttributes.optional() })
    : z.object(envelope);
}

/** The OpenAPI component of a type's webhook body, e.g. SaleCreatedPayload. */
export const payloadComponentName = (type: PublicEventType) =>
  `${type
    .split('.')
    .map((part) => `${part[0]?.toUpperCase()}${part.slice(1)}`)
    .join('')}Payload`;

/** An example webhook body of one public type, from one consistent little world. */
export function examplePayloadOf(type: PublicEventType): WebhookPayload {
  const payload = { id: examples.EVENT_ID, event: type, createdAt: examples.OCCURRED_AT, data: exampleEventData(type) };
  const action = type.split('.')[1];
  // The object as it stood one change earlier: only its updatedAt differed.
  if (action === 'updated') return { ...payload, revision: 1, previousAttributes: { updatedAt: examples.PREVIOUS_UPDATED_AT } };
  return { ...payload, revision: action === 'created' ? 0 : 2 };
}

/**
 * Valid data for an event of this type (the example world), with some fields replaced: for tests
 * and tools that publish events, which consumers refuse unless the data fits the type.
 */
export function exampleEventData<Type extends EventType>(type: Type, replaced: Partial<EventData<Type>> = {}): EventData<Type> {
  const [family, action] = type.split('.') as [string, string];
  const full: { id: string } =
    family === 'program'
      ? examples.program
      : type === 'sale.created'
        ? examples.expandedSale
        : examples.dataByFamily[family as keyof typeof examples.dataByFamily];
  const base = action === 'deleted' ? { id: full.id } : full;
  return { ...base, ...replaced } as EventData<Type>;
}

// EVENT_TYPES and the catalogue must list the same types: a type added to one only fails to compile.
const _everyTypeCatalogued: Record<(typeof EVENT_TYPES)[number], CatalogueEntry> = EVENT_CATALOGUE;
void _everyTypeCatalogued;
