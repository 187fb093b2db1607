import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import {
  Affiliate,
  Coupon,
  DateTime,
  DeletedEventData,
  ExpandedSale,
  PromotionalCode,
  PUBLIC_EVENT_TYPES,
  Referral,
  Sale,
  Uuid,
  type EventTypeDescription,
  type PublicEventType,
  type WebhookPayload,
} from '@affiliate/contracts';
import { z, type ZodTypeAny } from 'zod';
import * as examples from './event-examples';

/** When each type fires, in the spec's words. */
const FIRES_WHEN: Record<PublicEventType, string> = {
  'affiliate.created': 'An affiliate record exists, from any source. It fires on creation, not approval: check status.',
  'affiliate.updated': 'Profile edit, status change (approval, rejection), payout or commission change, and creation, edit or deletion of referral links.',
  'affiliate.deleted': 'An affiliate is removed. The body carries only the id.',
  'referral.created': 'A tracked click becomes an identified customer.',
  'referral.updated': 'Edits to the referral and subscription status changes; the current state is in status.',
  'referral.deleted': 'A referral is removed. The body carries only the id.',
  'sale.created': 'A payment is attributed to an affiliate and commission is calculated; once per attributed payment. Affiliate and referral are expanded.',
  'sale.updated': 'Amount or commission recalculated, or the sale rolled into a payout (see payoutCreated and payoutId in commissions).',
  'sale.deleted': 'A sale is reversed or removed. The body carries only the id.',
  'coupon.created': 'A coupon is created. The payload includes its promotional codes.',
  'coupon.updated': 'A coupon is changed. The payload includes its promotional codes.',
  'coupon.deleted': 'A coupon and, by cascade, its codes are deleted. The body carries only the id.',
  'promocode.created': 'A promotional code is issued. The payload includes the parent coupon.',
  'promocode.updated': 'A promotional code is edited or retired. The payload includes the parent coupon.',
  'promocode.deleted': 'A promotional code is removed. The body carries only the id.',
};

/** What `data` holds for each type: the object's full current state, or `{ id }` once it is deleted. */
function dataSchemaOf(type: PublicEventType): ZodTypeAny {
  const [family, action] = type.split('.') as [string, string];
  if (action === 'deleted') return DeletedEventData;
  if (type === 'sale.created') return ExpandedSale;
  const schemas: Record<string, ZodTypeAny> = { affiliate: Affiliate, referral: Referral, sale: Sale, coupon: Coupon, promocode: PromotionalCode };
  return schemas[family] as ZodTypeAny;
}

/** The zod schema of a whole webhook body of one type; the JSON Schema is generated from it. */
export function payloadSchemaOf(type: PublicEventType) {
  return z.object({ id: Uuid, event: z.literal(type), createdAt: DateTime, data: dataSchemaOf(type) }).strict();
}

function exampleOf(type: PublicEventType): WebhookPayload {
  const [family, action] = type.split('.') as [keyof typeof examples.dataByFamily, string];
  const full = type === 'sale.created' ? examples.expandedSale : examples.dataByFamily[family];
  return {
    id: examples.EVENT_ID,
    event: type,
    createdAt: examples.OCCURRED_AT,
    data: action === 'deleted' ? { id: full.id } : full,
  };
}

const SCHEMA_REF = '#/components/schemas/';

/** Generated once: OpenAPI 3.1 schemas are JSON Schema 2020-12, with refs moved under $defs. */
let catalogue: EventTypeDescription[] | undefined;

export function describeEventTypes(): EventTypeDescription[] {
  if (catalogue) return catalogue;
  const registry = new OpenAPIRegistry();
  const nameOf = (type: PublicEventType) => `${type.replace('.', '_')}_payload`;
  for (const type of PUBLIC_EVENT_TYPES) registry.register(nameOf(type), payloadSchemaOf(type));
  const generated = new OpenApiGeneratorV31(registry.definitions).generateComponents().components?.schemas ?? {};
  const definitions = JSON.parse(JSON.stringify(generated).replaceAll(SCHEMA_REF, '#/$defs/')) as Record<string, Record<string, unknown>>;

  catalogue = PUBLIC_EVENT_TYPES.map((type) => {
    const root = definitions[nameOf(type)] ?? {};
    const $defs = Object.fromEntries(referencedNames(root, definitions).map((name) => [name, definitions[name]]));
    return {
      type,
      description: FIRES_WHEN[type],
      schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', title: `${type} webhook`, ...root, ...(Object.keys($defs).length > 0 ? { $defs } : {}) },
      example: exampleOf(type),
    };
  });
  return catalogue;
}

/** Names of every definition a schema reaches through $ref, transitively. */
function referencedNames(root: unknown, definitions: Record<string, unknown>): string[] {
  const found = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')) {
        const name = value.slice('#/$defs/'.length);
        if (!found.has(name)) {
          found.add(name);
          visit(definitions[name]);
        }
      } else visit(value);
    }
  };
  visit(root);
  return [...found];
}
