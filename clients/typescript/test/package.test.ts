import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gatewayOpenApiDocument } from '../../../gateway/src/openapi/document';

const run = promisify(execFile);
const PACKAGE = join(__dirname, '..');

test("the package's version is the document's info.version, and the changelog has an entry for it", () => {
  const { version } = gatewayOpenApiDocument().info;
  const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { version: string; private?: boolean };
  expect({ version: manifest.version, private: manifest.private }).toEqual({ version, private: undefined });
  expect(readFileSync(join(PACKAGE, 'CHANGELOG.md'), 'utf8')).toMatch(new RegExp(`^## ${version.replace(/\./g, '\\.')}\\b`, 'm'));
});

test('the resource table is generated from the published document as it is now (npm run generate -w clients/typescript)', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'client-operations-'));
  writeFileSync(join(directory, 'openapi.json'), JSON.stringify(gatewayOpenApiDocument()));
  await run(
    process.execPath,
    [join(PACKAGE, 'scripts/generate-operations.mjs'), join(directory, 'openapi.json'), join(directory, 'operations.ts')],
    { timeout: 60_000 },
  );
  expect(readFileSync(join(directory, 'operations.ts'), 'utf8') === readFileSync(join(PACKAGE, 'src/operations.ts'), 'utf8')).toBe(true);
});
