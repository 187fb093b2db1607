import { PUBLIC_EVENT_TYPES, WebhookPayload, type EventTypeDescription, type PublicEventType } from '@affiliate/contracts';
import type { RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId } from '@affiliate/platform/testing';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { payloadSchemaOf } from '@affiliate/contracts';
import { bootDispatcher } from './support/dispatcher';

let service: RunningService;
let catalogue: EventTypeDescription[];

beforeAll(async () => {
  service = await bootDispatcher();
  catalogue = (await request(service.server).get('/event-types').set(internalHeaders(newProgramId())).expect(200)).body;
});
afterAll(() => service.stop());

test('GET /event-types lists exactly the public types of the catalogue, each with a description', () => {
  expect(catalogue.map((entry) => entry.type)).toEqual([...PUBLIC_EVENT_TYPES]);
  for (const entry of catalogue) expect(entry.description.length).toBeGreaterThan(10);
});

test('every example is a valid webhook body of its type', () => {
  for (const entry of catalogue) {
    expect(WebhookPayload.safeParse(entry.example).success).toBe(true);
    const parsed = payloadSchemaOf(entry.type as PublicEventType).safeParse(entry.example);
    expect([entry.type, parsed.success ? 'valid' : parsed.error.issues]).toEqual([entry.type, 'valid']);
    expect(entry.example.event).toBe(entry.type);
  }
});

test('every type comes with a self-contained JSON Schema of its body', () => {
  for (const entry of catalogue) {
    const schema = entry.schema as {
      $schema: string;
      type: string;
      properties: Record<string, { const?: string; enum?: string[] }>;
      required: string[];
      $defs?: Record<string, unknown>;
    };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(expect.arrayContaining(['id', 'event', 'createdAt', 'data']));
    const eventValues = schema.properties.event?.const !== undefined ? [schema.properties.event.const] : schema.properties.event?.enum;
    expect(eventValues).toEqual([entry.type]);
    const text = JSON.stringify(schema);
    expect(text).not.toContain('#/components/');
    for (const [, name] of text.matchAll(/"#\/\$defs\/([^"]+)"/g)) expect(schema.$defs?.[name as string]).toBeDefined();
  }
  const deleted = catalogue.find((entry) => entry.type === 'sale.deleted')?.example;
  expect(Object.keys(deleted?.data ?? {})).toEqual(['id']);
  expect(catalogue.find((entry) => entry.type === 'sale.created')?.example.data).toHaveProperty('affiliate');
  expect(catalogue.find((entry) => entry.type === 'promocode.created')?.example.data).toHaveProperty('coupon');
  expect(catalogue.find((entry) => entry.type === 'coupon.updated')?.example.data).toHaveProperty('promotionalCodes');
});

test('a receiver validating with the published JSON Schema keeps accepting bodies that gain fields, in the envelope and in data', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const entry of catalogue) {
    const validate = ajv.compile(entry.schema as object);
    const example = entry.example as { data: Record<string, unknown> };
    expect([entry.type, validate(example) ? 'valid' : validate.errors]).toEqual([entry.type, 'valid']);
    const grown = { ...example, deliveredBy: 'a later version', data: { ...example.data, addedLater: true } };
    expect([entry.type, validate(grown) ? 'valid' : validate.errors]).toEqual([entry.type, 'valid']);
  }
});
