import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument, ERROR_CATALOGUE, ERROR_CODES, errorCatalogueMarkdown, errorCatalogueTable } from '@affiliate/contracts';

const PAGE = join(__dirname, '..', '..', 'docs', 'errors.md');
const GUIDE = join(__dirname, '..', '..', 'docs', 'guides', 'errors.md');
/** The guide's table of codes: its header row and every table row after it. */
const GUIDE_TABLE = /^\| Code \| Status \| Meaning \|\n(?:\|.*\n?)*/m;

// UPDATE_ERROR_DOCS=1 writes both pages from the catalogue; otherwise they must already say what it says.
if (process.env.UPDATE_ERROR_DOCS === '1') {
  writeFileSync(PAGE, errorCatalogueMarkdown());
  writeFileSync(GUIDE, readFileSync(GUIDE, 'utf8').replace(GUIDE_TABLE, `${errorCatalogueTable()}\n`));
}

test('docs/errors.md lists every catalogued code with its status and meaning, exactly as the catalogue has them (UPDATE_ERROR_DOCS=1 rewrites it)', () => {
  expect(readFileSync(PAGE, 'utf8')).toBe(errorCatalogueMarkdown());
});

test('the errors guide served at /docs/guides/errors has the same table of codes', () => {
  expect(GUIDE_TABLE.exec(readFileSync(GUIDE, 'utf8'))?.[0]).toBe(`${errorCatalogueTable()}\n`);
});

test('every code is stable snake_case with at least one error status and a description', () => {
  for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(entry.statuses.length).toBeGreaterThan(0);
    for (const status of entry.statuses) expect(status).toBeGreaterThanOrEqual(400);
    expect(entry.description.length).toBeGreaterThan(20);
  }
});

test('the document publishes the catalogue: both error shapes require a code from its enum, each value described, and a requestId', () => {
  const schemas = buildOpenApiDocument().components?.schemas as Record<
    string,
    { enum?: string[]; required?: string[]; properties?: Record<string, unknown>; 'x-enumDescriptions'?: Record<string, string> }
  >;
  expect(schemas.ErrorCode?.enum).toEqual(ERROR_CODES);
  expect(Object.keys(schemas.ErrorCode?.['x-enumDescriptions'] ?? {})).toEqual(ERROR_CODES);
  for (const name of ['Error', 'NumberedError']) {
    expect(schemas[name]?.required).toEqual(expect.arrayContaining(['error', 'code', 'requestId']));
    expect(schemas[name]?.properties).toEqual(
      expect.objectContaining({
        code: { $ref: '#/components/schemas/ErrorCode' },
        param: expect.any(Object),
        requestId: expect.any(Object),
      }),
    );
  }
});
