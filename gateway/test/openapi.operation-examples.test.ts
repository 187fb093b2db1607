import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  API_OPERATIONS,
  CSV_COLUMNS,
  OPERATION_EXAMPLES,
  SignupResult,
  SignupSubmission,
  StripeWebhookReceipt,
  z,
  type CodeSample,
} from '@affiliate/contracts';
import { describeZodError } from '@affiliate/platform';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import ts from 'typescript';
import type { ZodTypeAny } from 'zod';
import { gatewayOpenApiDocument } from '../src/openapi/document';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const ROOT = join(__dirname, '..', '..');
const document = gatewayOpenApiDocument() as unknown as Json;
const operations = Object.entries(document.paths as Json).flatMap(([path, item]) =>
  ['get', 'post', 'put', 'delete']
    .filter((method) => (item as Json)[method])
    .map((method) => ({ path, method, operation: (item as Json)[method] as Json })),
);

/** The zod schemas of each operation: API_OPERATIONS, and the three the document registers by hand (Stripe's webhook, the sign-up page). */
const SCHEMAS: Record<string, { body?: ZodTypeAny; response: ZodTypeAny }> = {
  ...Object.fromEntries(API_OPERATIONS.map((operation) => [operation.operationId, { body: operation.body, response: operation.response }])),
  receiveStripeWebhook: { body: z.record(z.unknown()), response: StripeWebhookReceipt },
  getSignupPage: { response: z.string() },
  applyToProgram: { body: SignupSubmission, response: SignupResult },
};

test('every operation of the document has an example, and every example an operation', () => {
  expect(Object.keys(OPERATION_EXAMPLES).sort()).toEqual(operations.map(({ operation }) => operation.operationId).sort());
});

test("each example's request and answer are what the operation's zod schemas accept", () => {
  const refused = Object.entries(OPERATION_EXAMPLES).flatMap(([operationId, example]) => {
    const schemas = SCHEMAS[operationId];
    if (!schemas) return [`${operationId}: no such operation`];
    const problems: string[] = [];
    if ((example.request !== undefined) !== (schemas.body !== undefined))
      problems.push(`${operationId}: a request example exactly when the operation takes a body`);
    if (schemas.body && example.request !== undefined) {
      const parsed = schemas.body.safeParse(example.request);
      if (!parsed.success) problems.push(`${operationId} request: ${describeZodError(parsed.error, 'body')}`);
    }
    const answer = schemas.response.safeParse(example.response);
    if (!answer.success)
      problems.push(
        `${operationId} response: ${describeZodError(answer.error, 'body')} at ${JSON.stringify(answer.error.issues[0]?.path)}`,
      );
    return problems;
  });
  expect(refused).toEqual([]);
});

test('an example refusal that names its request is the message the schema gives that request', () => {
  const wrong = Object.entries(OPERATION_EXAMPLES).flatMap(([operationId, { error }]) => {
    const body = SCHEMAS[operationId]?.body;
    if (error.request === undefined || !body) return [];
    const parsed = body.safeParse(error.request);
    if (parsed.success) return [`${operationId}: the schema accepts ${JSON.stringify(error.request)}`];
    // The specification's exact messages (the slug rules) are answered bare, without the field's name.
    const answered = [describeZodError(parsed.error, 'body'), ...parsed.error.issues.map((issue) => issue.message)];
    return answered.includes(error.message)
      ? []
      : [`${operationId}: ${JSON.stringify(error.message)} is not ${JSON.stringify(answered[0])}`];
  });
  expect(wrong).toEqual([]);
});

test('every example in the published document validates against its schema (JSON Schema 2020-12, as the document declares)', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  // zod's ip(): either family (ajv-formats knows only ipv4 and ipv6).
  ajv.addFormat('ip', { validate: (value: string) => isIP(value) !== 0 });
  ajv.addSchema({ $id: 'https://example.com/openapi.json', components: document.components });
  const compile = (schema: Json) =>
    ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"https://example.com/openapi.json#/components/')));
  const invalid: string[] = [];
  let checked = 0;
  for (const { path, method, operation } of operations) {
    const media = [
      ...Object.entries(operation.requestBody?.content ?? {}).map(([type, content]) => ({
        where: `request ${type}`,
        content: content as Json,
      })),
      ...Object.entries(operation.responses as Json).flatMap(([status, response]) =>
        Object.entries((response as Json).content ?? {}).map(([type, content]) => ({
          where: `${status} ${type}`,
          content: content as Json,
        })),
      ),
    ];
    for (const { where, content } of media) {
      if (content.example === undefined) continue;
      checked += 1;
      const validate = compile(content.schema ?? {});
      if (!validate(content.example)) invalid.push(`${method.toUpperCase()} ${path} ${where}: ${ajv.errorsText(validate.errors)}`);
    }
  }
  expect(invalid).toEqual([]);
  // A request, a success and at least one refusal for each operation.
  expect(checked).toBeGreaterThan(operations.length * 3);
});

test('every operation has a success example and an example of its main refusal', () => {
  const missing = operations.flatMap(({ path, method, operation }) => {
    const example = OPERATION_EXAMPLES[operation.operationId as string]!;
    const success = Object.values(operation.responses[example.status ?? '200']?.content ?? {}).some(
      (content) => (content as Json).example !== undefined,
    );
    const refusal = Object.values(operation.responses[example.error.status]?.content ?? {}).some(
      (content) => (content as Json).example !== undefined,
    );
    const request = !operation.requestBody || operation.requestBody.content['application/json']?.example !== undefined;
    return success && refusal && request ? [] : [`${method.toUpperCase()} ${path}`];
  });
  expect(missing).toEqual([]);
});

test("every answer in CSV shows a CSV example, each list's headed by the columns its service writes", () => {
  const csvExamples = operations.flatMap(({ path, method, operation }) =>
    Object.values(operation.responses as Json).flatMap((response) => {
      const csv = (response as Json).content?.['text/csv'] as Json | undefined;
      return csv ? [{ where: `${method.toUpperCase()} ${path}`, example: csv.example as string | undefined }] : [];
    }),
  );
  expect(csvExamples.filter(({ example }) => typeof example !== 'string' || example.length === 0).map(({ where }) => where)).toEqual([]);
  const headerOf = (where: string) => csvExamples.find((each) => each.where === where)?.example?.split('\r\n')[0];
  const header = (columns: readonly string[]) => columns.map((column) => `"${column}"`).join(',');
  expect({
    affiliates: headerOf('GET /api/v1/affiliates'),
    referrals: headerOf('GET /api/v1/referrals'),
    sales: headerOf('GET /api/v1/sales'),
    commissions: headerOf('GET /api/v1/commissions'),
    report: headerOf('GET /api/v1/reports/affiliates'),
  }).toEqual({
    affiliates: header(CSV_COLUMNS.affiliates),
    referrals: header(CSV_COLUMNS.referrals),
    sales: header(CSV_COLUMNS.sales),
    commissions: header(CSV_COLUMNS.commissions),
    report: header(CSV_COLUMNS.affiliateReport),
  });
});

test('the sign-up form shows its form-encoded request and the HTML page it answers', () => {
  const join = document.paths['/join/{slug}'].post as Json;
  expect(join.requestBody.content['application/x-www-form-urlencoded'].example).toMatchObject({
    email: 'jane@example.com',
    formToken: expect.any(String),
    website: '',
  });
  expect(join.responses['200'].content['text/html'].example).toContain('Application received');
});

test('GET /event-types shows one entry: an event type, when it fires, its schema and its example payload', () => {
  const [entry] = document.paths['/api/v1/event-types'].get.responses['200'].content['application/json'].example as Json[];
  expect(entry).toMatchObject({
    type: 'sale.created',
    description: expect.any(String),
    schema: expect.any(Object),
    example: { event: 'sale.created' },
  });
});

const samplesOf = (lang: CodeSample['lang']) =>
  operations.map(({ operation }) => ({
    operationId: operation.operationId as string,
    source: ((operation['x-codeSamples'] ?? []) as CodeSample[]).find((sample) => sample.lang === lang)?.source,
  }));

test('every operation has curl, TypeScript and Python samples', () => {
  for (const { operation } of operations) {
    expect({
      operationId: operation.operationId,
      langs: ((operation['x-codeSamples'] ?? []) as CodeSample[]).map((sample) => sample.lang),
    }).toEqual({
      operationId: operation.operationId,
      langs: ['Shell', 'TypeScript', 'Python'],
    });
  }
});

test('a sample pasted twice makes two requests: curl and Python make a fresh Idempotency-Key, TypeScript leaves it to the SDK', () => {
  const keyed = operations.filter(
    ({ method, operation }) =>
      method === 'post' && (operation.parameters ?? []).some((parameter: Json) => parameter.name === 'idempotency-key'),
  );
  expect(keyed.length).toBeGreaterThan(10);
  const sampleOf = (operation: Json, lang: CodeSample['lang']) =>
    ((operation['x-codeSamples'] ?? []) as CodeSample[]).find((sample) => sample.lang === lang)?.source ?? '';
  const wrong = keyed.flatMap(({ operation }) => [
    ...(sampleOf(operation, 'Shell').includes('-H "Idempotency-Key: $(uuidgen)"') ? [] : [`${operation.operationId} curl`]),
    ...(sampleOf(operation, 'Python').includes('"Idempotency-Key": str(uuid.uuid4())') &&
    sampleOf(operation, 'Python').includes('import uuid')
      ? []
      : [`${operation.operationId} Python`]),
    ...(/idempotency-key/i.test(sampleOf(operation, 'TypeScript')) ? [`${operation.operationId} TypeScript`] : []),
  ]);
  expect(wrong).toEqual([]);
});

test("the TypeScript samples use the SDK's resources: for await over a list, create on a POST", () => {
  const sampleOf = (path: string, method: string) =>
    ((document.paths[path][method]['x-codeSamples'] ?? []) as CodeSample[]).find((sample) => sample.lang === 'TypeScript')?.source ?? '';
  expect(sampleOf('/api/v1/sales', 'get')).toContain('for await (const sale of client.sales.list(');
  expect(sampleOf('/api/v1/sales', 'post')).toContain('await client.sales.create(');
  expect(sampleOf('/api/v1/event-types', 'get')).toContain('for await (const eventType of client.eventTypes.list())');
});

test('every TypeScript sample compiles against the typed client @affiliate/client', () => {
  const directory = mkdtempSync(join(tmpdir(), 'samples-'));
  const file = join(directory, 'samples.ts');
  // Each sample in its own function: they declare the same names, and share one import.
  const bodies = samplesOf('TypeScript').map(
    ({ operationId, source }) =>
      `export async function ${operationId}Sample(): Promise<void> {\n${source!.replace(/^import .*\n\n?/m, '')}\n}`,
  );
  writeFileSync(file, `import { createAffiliateClient } from '@affiliate/client';\n\n${bodies.join('\n\n')}\n`);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    baseUrl: ROOT,
    paths: { '@affiliate/client': ['clients/typescript/src/index.ts'] },
  });
  const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const line =
      diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
    return `samples.ts:${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
  expect(problems).toEqual([]);
}, 120_000);

test('every Python sample is valid Python', () => {
  const samples = samplesOf('Python');
  const script =
    'import ast, json, sys\nfor sample in json.load(sys.stdin):\n    ast.parse(sample["source"], sample["operationId"])\nprint("ok")';
  expect(execFileSync('python3', ['-c', script], { input: JSON.stringify(samples), encoding: 'utf8' }).trim()).toBe('ok');
});

test('every curl sample is one valid shell command', () => {
  const bad = samplesOf('Shell').filter(({ source }) => {
    try {
      execFileSync('bash', ['-n', '-c', source!]);
      return false;
    } catch {
      return true;
    }
  });
  expect(bad).toEqual([]);
});

test('Redocly finds nothing wrong with the examples', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
  writeFileSync(path, JSON.stringify(document));
  const run = promisify(execFile);
  const output = await run(
    join(ROOT, 'node_modules/.bin/redocly'),
    ['lint', path, '--config', join(ROOT, 'gateway/openapi/redocly.yaml'), '--format', 'json'],
    {
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  ).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  const report = JSON.parse(output.slice(output.indexOf('{'))) as {
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  const aboutExamples = report.problems
    .filter((problem) => /example/i.test(problem.ruleId))
    .map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`);
  expect(aboutExamples).toEqual([]);
}, 150_000);

test('Spectral finds nothing wrong with the examples, not even a warning', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
  writeFileSync(path, JSON.stringify(document));
  const run = promisify(execFile);
  const output = await run(
    join(ROOT, 'node_modules/.bin/spectral'),
    ['lint', path, '--ruleset', join(ROOT, 'gateway/openapi/spectral.yaml'), '--format', 'json'],
    { timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
  ).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  const problems = JSON.parse(output.slice(output.indexOf('['), output.lastIndexOf(']') + 1)) as {
    code: string;
    path: string[];
    message: string;
  }[];
  expect(
    problems
      .filter((problem) => /example/i.test(problem.code))
      .map((problem) => `${problem.code} ${problem.path.join('/')}: ${problem.message}`),
  ).toEqual([]);
}, 150_000);
