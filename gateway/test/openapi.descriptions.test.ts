import { gatewayOpenApiDocument } from '../src/openapi/document';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const document = gatewayOpenApiDocument() as unknown as Json;
const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/**
 * The error bodies belong to the error catalogue's work (issue 31, coded errors), which describes
 * their fields; they are the only schemas this test leaves to another check.
 */
const ERROR_SCHEMAS = new Set(['Error', 'NumberedError', 'Problem']);

/** Every operation of the document, the webhooks a subscriber receives included, named as a reader finds it. */
const operations = [
  ...Object.entries(document.paths as Json).flatMap(([path, item]) =>
    METHODS.filter((method) => (item as Json)[method]).map((method) => ({
      name: `${method.toUpperCase()} ${path}`,
      operation: (item as Json)[method] as Json,
    })),
  ),
  ...Object.entries((document.webhooks ?? {}) as Json).flatMap(([type, item]) =>
    METHODS.filter((method) => (item as Json)[method]).map((method) => ({
      name: `webhook ${type}`,
      operation: (item as Json)[method] as Json,
    })),
  ),
];

const described = (text: unknown) => typeof text === 'string' && text.trim().length > 0;

const componentOf = (ref: unknown): Json | undefined =>
  typeof ref === 'string' ? (document.components.schemas as Json)[ref.replace('#/components/schemas/', '')] : undefined;

/**
 * A property is described by its own description, or, where the generator wraps a referenced
 * schema to add one (`allOf: [{$ref}, {description}]`), by the description beside the reference.
 * A bare reference is described by its component: the generator drops a description given to a
 * nullable reference, and client generators refuse the allOf wrapper around a referenced enum.
 */
const isDescribed = (schema: Json) =>
  described(schema.description) ||
  (Array.isArray(schema.allOf) && schema.allOf.some((member: Json) => described(member.description))) ||
  described(componentOf(schema.$ref)?.description);

/** Every property without a description under this schema, each named by its path (Schema.field.inner, items as []). */
function undescribedProperties(schema: unknown, at: string): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Json;
  const own = Object.entries((node.properties ?? {}) as Json).flatMap(([name, property]) => [
    ...(isDescribed(property as Json) ? [] : [`${at}.${name}`]),
    ...undescribedProperties(property, `${at}.${name}`),
  ]);
  const nested = [
    ...(node.items ? undescribedProperties(node.items, `${at}[]`) : []),
    ...(typeof node.additionalProperties === 'object' ? undescribedProperties(node.additionalProperties, `${at}{}`) : []),
    ...['anyOf', 'oneOf', 'allOf'].flatMap((key) =>
      ((node[key] ?? []) as unknown[]).flatMap((member) => undescribedProperties(member, at)),
    ),
  ];
  return [...own, ...nested];
}

test('every operation has a summary and a description, so the reference says what it does, not only its name', () => {
  const missing = operations.flatMap(({ name, operation }) => [
    ...(described(operation.summary) ? [] : [`${name}: summary`]),
    ...(described(operation.description) ? [] : [`${name}: description (contracts/src/operation-descriptions.ts)`]),
  ]);
  expect(missing).toEqual([]);
});

test('every property of every component schema has a description', () => {
  const missing = Object.entries(document.components.schemas as Json)
    .filter(([name]) => !ERROR_SCHEMAS.has(name))
    .flatMap(([name, schema]) => undescribedProperties(schema, name));
  expect(missing).toEqual([]);
});

test('every property of a request or response body written inline in an operation has a description', () => {
  const missing = operations.flatMap(({ name, operation }) => [
    ...Object.entries((operation.requestBody?.content ?? {}) as Json).flatMap(([type, content]) =>
      undescribedProperties((content as Json).schema, `${name} body (${type})`),
    ),
    ...Object.entries((operation.responses ?? {}) as Json).flatMap(([status, response]) =>
      Object.entries(((response as Json).content ?? {}) as Json).flatMap(([type, content]) =>
        undescribedProperties((content as Json).schema, `${name} ${status} (${type})`),
      ),
    ),
  ]);
  expect(missing).toEqual([]);
});

test('every parameter and response header has a description', () => {
  const missing = operations.flatMap(({ name, operation }) => [
    ...((operation.parameters ?? []) as Json[])
      .filter((parameter) => !described(parameter.description))
      .map((parameter) => `${name}: ${parameter.in} parameter ${parameter.name}`),
    ...Object.entries((operation.responses ?? {}) as Json).flatMap(([status, response]) =>
      Object.entries(((response as Json).headers ?? {}) as Json)
        .filter(([, header]) => !described((header as Json).description) && !described((header as Json).schema?.description))
        .map(([header]) => `${name} ${status}: header ${header}`),
    ),
  ]);
  expect(missing).toEqual([]);
});

test('every tag has a description', () => {
  const missing = ((document.tags ?? []) as Json[]).filter((tag) => !described(tag.description)).map((tag) => tag.name as string);
  expect(missing).toEqual([]);
});
