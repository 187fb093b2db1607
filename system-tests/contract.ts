import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ERROR_CATALOGUE } from '@affiliate/contracts';
import { gatewayOpenApiDocument } from '../gateway/src/openapi/document';

/**
 * The drift check: every answer the system tests receive through the gateway is held against the
 * published OpenAPI document (status, JSON body and documented headers). OpenAPI 3.1 schemas are
 * JSON Schema 2020-12, so Ajv validates them as they are; the document is added whole, and each
 * response schema is reached by a JSON pointer into it, so `#/components/...` references resolve.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const document = gatewayOpenApiDocument() as unknown as Json;
const DOCUMENT_ID = 'https://affiliate-platform.local/openapi.json';
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ ...document, $id: DOCUMENT_ID });

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const compiled = new Map<string, ValidateFunction>();
function validatorAt(pointer: string[]): ValidateFunction {
  const ref = `${DOCUMENT_ID}#/${pointer.map(escapePointer).join('/')}`;
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  return validate;
}

const templates = Object.keys(document.paths as Json).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
}));

/** The document's path for a request path, or null when the document does not describe it (probes, docs, made-up paths). */
function documentedPath(path: string): string | null {
  return templates.find(({ pattern }) => pattern.test(path))?.template ?? null;
}

/** The API's own prefixes: a path under them that the document lacks may only answer "no such route". */
const API_PREFIXES = ['/api/v1/', '/admin/v1/'];
/** Under those prefixes but not an operation: the document itself. */
const DOCUMENT_PATH = '/api/v1/openapi.json';
/** Before routing, an unknown path can still be refused for its credential or rate. */
const NO_SUCH_ROUTE_STATUSES = [401, 404, 429];

/** Headers the gateway sets: each one sent must be documented for that answer, as the body is. */
const GATEWAY_HEADERS = [
  'link',
  'retry-after',
  'idempotent-replayed',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'www-authenticate',
];

export type Exchange = { method: string; path: string; status: number; headers: Headers; body: unknown; text: string };

/**
 * An error answer's code is one of the catalogue's, for a status the catalogue gives it, and its
 * requestId is the answer's X-Request-Id: wherever the error came from (gateway, service, a body the
 * gateway rewrote or replayed), including paths the document does not describe.
 */
function errorBodyViolations(exchange: Exchange, where: string): string[] {
  const body = exchange.body as Json | null;
  if (exchange.status < 400 || typeof body !== 'object' || body === null || Array.isArray(body) || !('error' in body)) return [];
  const problems: string[] = [];
  const entry = (ERROR_CATALOGUE as Record<string, { statuses: readonly number[] }>)[String(body.code)];
  if (!entry)
    problems.push(
      `${where}: error code ${JSON.stringify(body.code)} is not in the catalogue (contracts/src/errors.ts); body ${exchange.text.slice(0, 300)}`,
    );
  else if (!entry.statuses.includes(exchange.status))
    problems.push(`${where}: error code ${body.code} is catalogued for ${entry.statuses.join(', ')}, not ${exchange.status}`);
  const header = exchange.headers.get('x-request-id');
  if (body.requestId !== header)
    problems.push(`${where}: error requestId ${JSON.stringify(body.requestId)} is not the X-Request-Id header ${JSON.stringify(header)}`);
  return problems;
}

/** What in this answer the document does not say; empty when it matches. */
export function contractViolations(exchange: Exchange): string[] {
  const path = exchange.path.split('?')[0] ?? '';
  return [...documentViolations(exchange, path), ...errorBodyViolations(exchange, `${exchange.method} ${path} → ${exchange.status}`)];
}

function documentViolations(exchange: Exchange, path: string): string[] {
  const template = documentedPath(path);
  if (!template) {
    if (path === DOCUMENT_PATH || !API_PREFIXES.some((prefix) => path.startsWith(prefix))) return []; // probes, docs, console: not the API
    const refused = NO_SUCH_ROUTE_STATUSES.includes(exchange.status) && typeof (exchange.body as Json | null)?.error === 'string';
    return refused ? [] : [`${exchange.method} ${path} → ${exchange.status}: the document has no path for it`];
  }
  const method = exchange.method.toLowerCase();
  const operation = (document.paths as Json)[template]?.[method] as Json | undefined;
  const where = `${exchange.method} ${path} → ${exchange.status}`;
  if (!operation) return [`${where}: the document has no ${exchange.method} ${template}`];
  const status = String(exchange.status);
  const response = operation.responses?.[status] as Json | undefined;
  if (!response) return [`${where}: status ${status} is not documented (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`];

  const problems: string[] = [];
  const pointer = ['paths', template, method, 'responses', status];
  const contentType = exchange.headers.get('content-type') ?? '';
  if (response.content?.['text/csv'] && /^text\/csv/.test(contentType)) {
    if (typeof exchange.text !== 'string' || !exchange.text.includes('\n')) problems.push(`${where}: a CSV answer without a header row`);
  } else if (response.content?.['application/json']) {
    if (!/application\/json/.test(exchange.headers.get('content-type') ?? '')) {
      problems.push(`${where}: content-type ${exchange.headers.get('content-type')} where application/json is documented`);
    } else {
      const validate = validatorAt([...pointer, 'content', 'application/json', 'schema']);
      if (!validate(exchange.body))
        problems.push(
          `${where}: body does not match the document: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}; body ${exchange.text.slice(0, 300)}`,
        );
    }
  }
  const documentedHeaders = new Set(Object.keys((response.headers ?? {}) as Json).map((name) => name.toLowerCase()));
  for (const name of GATEWAY_HEADERS) {
    if (exchange.headers.has(name) && !documentedHeaders.has(name))
      problems.push(`${where}: header ${name} is sent but not documented for this answer`);
  }
  for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
    const value = exchange.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`${where}: documented header ${name} is missing`);
      continue;
    }
    const validate = validatorAt([...pointer, 'headers', name, 'schema']);
    if (!validate(value))
      problems.push(`${where}: header ${name}: ${JSON.stringify(value)} does not match the document: ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}
