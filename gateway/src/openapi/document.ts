import { buildOpenApiDocument, EVENT_CATALOGUE, payloadComponentName, PUBLIC_EVENT_TYPES } from '@affiliate/contracts';

type Document = ReturnType<typeof buildOpenApiDocument> & { webhooks?: Record<string, unknown> };

const signatureHeaders = [
  { name: 'webhook-id', description: 'The event id; the same on every retry, so receivers can drop duplicates.' },
  { name: 'webhook-timestamp', description: 'Unix seconds when this attempt was signed.' },
  {
    name: 'webhook-signature',
    description: 'v1,<base64 HMAC-SHA256 of "id.timestamp.body" with the endpoint secret> (Standard Webhooks).',
  },
].map((header) => ({ ...header, in: 'header' as const, required: true, schema: { type: 'string' as const } }));

/**
 * The public API, the admin API and, as OpenAPI 3.1 `webhooks`, what a subscriber receives for
 * each public event type, with its own payload schema from the event catalogue (contracts).
 */
export function gatewayOpenApiDocument(): Document {
  const document: Document = buildOpenApiDocument('/');
  document.webhooks = Object.fromEntries(
    PUBLIC_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `${type} delivered to a subscribed webhook endpoint`,
          // When it fires, from the event catalogue: the same words as GET /event-types and the console.
          description: EVENT_CATALOGUE[type].firesWhen,
          tags: ['Webhook events'],
          operationId: `receive${type
            .split('.')
            .map((part) => part[0]?.toUpperCase() + part.slice(1))
            .join('')}`,
          // We call the subscriber: no credential of ours is involved, the signature headers authenticate us.
          security: [],
          parameters: signatureHeaders,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${payloadComponentName(type)}` } } },
          },
          responses: {
            '2XX': { description: 'Delivered. Any other answer, or none within 15 s, is retried with backoff.' },
            '410': { description: 'Gone: the endpoint is disabled and receives nothing more.' },
          },
        },
      },
    ]),
  );
  return document;
}
