import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import {
  EVENT_CATALOGUE,
  examplePayloadOf,
  payloadSchemaOf,
  PUBLIC_EVENT_TYPES,
  type EventTypeDescription,
  type PublicEventType,
} from '@affiliate/contracts';

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
      description: EVENT_CATALOGUE[type].firesWhen,
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        title: `${type} webhook`,
        ...root,
        ...(Object.keys($defs).length > 0 ? { $defs } : {}),
      },
      example: examplePayloadOf(type),
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
