/**
 * `x-codeSamples` (Redoc's extension) for every operation: curl, TypeScript with the SDK
 * @affiliate/client (clients/typescript: its resource methods where the path is a resource) and
 * Python with requests, each written from the
 * operation's example (operation-examples.ts), never by hand, so a sample cannot drift from the
 * example the schemas check. gateway/test/openapi.operation-examples.test.ts type-checks every
 * TypeScript sample against the client and parses every Python one.
 */
import type { OperationExample } from './operation-examples';

export type CodeSample = { lang: 'Shell' | 'TypeScript' | 'Python'; label: string; source: string };

/** What a sample needs of the operation as the document has it. */
export type SampledOperation = {
  method: string;
  /** The documented path, with {parameters}. */
  path: string;
  /** Which credential the operation takes: an API key, the admin token, a publishable key, or none. */
  credential: 'apiKey' | 'adminToken' | 'publishableKey' | 'none';
  /** The Idempotency-Key header is documented on it (public writes). */
  idempotent: boolean;
  /** The success answer is text (CSV or HTML), not JSON. */
  text: boolean;
  /** Extra request headers the caller must send (Stripe-Signature, Origin). */
  headers?: Record<string, string>;
};

export const SAMPLE_BASE_URL = 'https://affiliates.example.com';
/**
 * A fresh Idempotency-Key per run, as each language makes one: a fixed key would make the second
 * sample pasted within 24 h a 409 (the same key, another request). The TypeScript SDK sends a key
 * of its own on every POST, reused across its retries, so its samples send none.
 */
const FRESH_KEY = { curl: '$(uuidgen)', python: 'str(uuid.uuid4())' } as const;

const CREDENTIAL_ENV = {
  apiKey: 'AFFILIATE_API_KEY',
  adminToken: 'ADMIN_TOKEN',
  publishableKey: 'AFFILIATE_PUBLISHABLE_KEY',
  none: null,
} as const;

function concretePath(operation: SampledOperation, example: OperationExample): string {
  return operation.path.replace(/\{(\w+)\}/g, (_whole, name: string) => encodeURIComponent(example.path?.[name] ?? `<${name}>`));
}

function queryString(example: OperationExample): string {
  const entries = Object.entries(example.query ?? {}).map(([name, value]): [string, string] => [name, String(value)]);
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries).toString()}`;
}

const takesIdempotencyKey = (operation: SampledOperation) => operation.idempotent && operation.method === 'post';

/** The extra headers (Stripe-Signature, Origin), as literal values. */
const headersOf = (operation: SampledOperation): [string, string][] => Object.entries(operation.headers ?? {});

/**
 * The SDK's resource of a path (`client.sales` for /api/v1/sales, `client.affiliateReports` for
 * /api/v1/reports/affiliates), as clients/typescript/scripts/generate-operations.mjs names them; null
 * for the other paths, which the SDK calls by path.
 */
function sdkResourceOf(path: string): string | null {
  const camelCase = (name: string) => name.replace(/-([a-z])/g, (_whole, letter: string) => letter.toUpperCase());
  const one = /^\/api\/v1\/([a-z-]+)$/.exec(path);
  if (one) return camelCase(one[1]!);
  const report = /^\/api\/v1\/reports\/([a-z-]+)s$/.exec(path);
  return report ? camelCase(`${report[1]!}-reports`) : null;
}

/** `sale` of `sales`, `webhookDelivery` of `webhookDeliveries`: the name of one object of a resource. */
const singular = (resource: string) => resource.replace(/ies$/, 'y').replace(/s$/, '');

const shellQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

function curlSample(operation: SampledOperation, example: OperationExample): string {
  const url = `${SAMPLE_BASE_URL}${concretePath(operation, example)}${queryString(example)}`;
  const lines = [`curl -s -X ${operation.method.toUpperCase()} ${shellQuoted(url)}`];
  const env = CREDENTIAL_ENV[operation.credential];
  if (env) lines.push(`-H "Authorization: Bearer $${env}"`);
  if (takesIdempotencyKey(operation)) lines.push(`-H "Idempotency-Key: ${FRESH_KEY.curl}"`);
  for (const [name, value] of headersOf(operation)) lines.push(`-H ${shellQuoted(`${name}: ${value}`)}`);
  if (example.request !== undefined) {
    lines.push(`-H 'Content-Type: application/json'`);
    lines.push(`-d ${shellQuoted(JSON.stringify(example.request))}`);
  }
  return lines.join(' \\\n  ');
}

/** A JSON value as TypeScript source, indented to sit inside a call. */
const tsLiteral = (value: unknown, indent: string) => JSON.stringify(value, null, 2).replaceAll('\n', `\n${indent}`);

/** The SDK's resource method for the operation, or null when the path is not a resource (or the call takes no body). */
function resourceCall(operation: SampledOperation, example: OperationExample): string[] | null {
  const resource = operation.credential === 'apiKey' ? sdkResourceOf(operation.path) : null;
  if (!resource || operation.text) return null;
  const client = `client.${resource}`;
  const query = example.query ? tsLiteral(example.query, '') : '';
  if (operation.method === 'get' && Array.isArray(example.response)) {
    const item = singular(resource);
    return [`for await (const ${item} of ${client}.list(${query})) {`, `  console.log(${item});`, '}'];
  }
  if (operation.method === 'get')
    return [`const ${singular(resource)} = await ${client}.retrieve(${query});`, `console.log(${singular(resource)});`];
  if (example.request === undefined) return null;
  const method = { post: 'create', put: 'update', delete: 'delete' }[operation.method];
  if (!method) return null;
  const result = operation.method === 'delete' ? 'result' : singular(resource);
  return [`const ${result} = await ${client}.${method}(${tsLiteral(example.request, '')});`, `console.log(${result});`];
}

function typeScriptSample(operation: SampledOperation, example: OperationExample): string {
  const url = `${SAMPLE_BASE_URL}${concretePath(operation, example)}${queryString(example)}`;
  const env = CREDENTIAL_ENV[operation.credential];
  if (!env) {
    // No credential of ours: the caller is Stripe or an applicant's browser, so plain fetch shows the exchange best.
    const headers = Object.fromEntries([
      ...(example.request !== undefined ? [['Content-Type', 'application/json']] : []),
      ...headersOf(operation),
    ]);
    const init = [`method: '${operation.method.toUpperCase()}'`];
    if (Object.keys(headers).length > 0) init.push(`headers: ${tsLiteral(headers, '  ')}`);
    if (example.request !== undefined) init.push(`body: JSON.stringify(${tsLiteral(example.request, '  ')})`);
    return [
      `const response = await fetch('${url}', {`,
      ...init.map((line) => `  ${line},`),
      '});',
      `console.log(response.status, await response.${operation.text ? 'text' : 'json'}());`,
    ].join('\n');
  }
  const preamble = [
    "import { createAffiliateClient } from '@affiliate/client';",
    '',
    `const client = createAffiliateClient({ baseUrl: '${SAMPLE_BASE_URL}', apiKey: process.env.${env}! });`,
  ];
  const viaResource = resourceCall(operation, example);
  // The SDK sends an Idempotency-Key of its own on every POST and retries 429 and 503 with it.
  if (viaResource)
    return [...preamble, '// A refusal is thrown as AffiliateApiError (status, code, message, requestId).', ...viaResource].join('\n');
  const params: string[] = [];
  if (example.path) params.push(`path: ${tsLiteral(example.path, '    ')}`);
  if (example.query) params.push(`query: ${tsLiteral(example.query, '    ')}`);
  const options: string[] = [];
  if (params.length > 0) options.push(`params: {\n    ${params.join(',\n    ')},\n  }`);
  if (example.request !== undefined) options.push(`body: ${tsLiteral(example.request, '  ')}`);
  if (operation.text) options.push(`parseAs: 'text'`);
  const call =
    options.length > 0
      ? `client.${operation.method.toUpperCase()}('${operation.path}', {\n  ${options.join(',\n  ')},\n})`
      : `client.${operation.method.toUpperCase()}('${operation.path}')`;
  return [
    ...preamble,
    `const { data, error } = await ${call};`,
    // Every error body carries `error` (the specification's message): print it whole, whatever its shape.
    'if (error) throw new Error(JSON.stringify(error));',
    'console.log(data);',
  ].join('\n');
}

/** A JSON value as a Python literal (True, False, None), indented to sit inside a call. */
function pythonLiteral(value: unknown, indent: string): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value))
    return value.length === 0 ? '[]' : `[\n${value.map((item) => `${inner}${pythonLiteral(item, inner)},`).join('\n')}\n${indent}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.length === 0
    ? '{}'
    : `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${pythonLiteral(item, inner)},`).join('\n')}\n${indent}}`;
}

function pythonSample(operation: SampledOperation, example: OperationExample): string {
  const env = CREDENTIAL_ENV[operation.credential];
  const headers = [
    ...(env ? [`"Authorization": f"Bearer {os.environ['${env}']}"`] : []),
    ...(takesIdempotencyKey(operation) ? [`"Idempotency-Key": ${FRESH_KEY.python}`] : []),
    ...headersOf(operation).map(([name, value]) => `${JSON.stringify(name)}: ${JSON.stringify(value)}`),
  ];
  const args = [`"${SAMPLE_BASE_URL}${concretePath(operation, example)}"`];
  if (headers.length > 0) args.push(`headers={${headers.join(', ')}}`);
  if (example.query) args.push(`params=${pythonLiteral(example.query, '    ')}`);
  if (example.request !== undefined) args.push(`json=${pythonLiteral(example.request, '    ')}`);
  args.push('timeout=30');
  const imports = [...(env ? ['import os'] : []), ...(takesIdempotencyKey(operation) ? ['import uuid'] : [])];
  return [
    ...(imports.length > 0 ? [...imports, ''] : []),
    'import requests',
    '',
    `response = requests.${operation.method}(`,
    ...args.map((arg) => `    ${arg},`),
    ')',
    'response.raise_for_status()',
    `print(response.${operation.text ? 'text' : 'json()'})`,
  ].join('\n');
}

export function codeSamplesOf(operation: SampledOperation, example: OperationExample): CodeSample[] {
  return [
    { lang: 'Shell', label: 'curl', source: curlSample(operation, example) },
    { lang: 'TypeScript', label: 'TypeScript', source: typeScriptSample(operation, example) },
    { lang: 'Python', label: 'Python', source: pythonSample(operation, example) },
  ];
}
