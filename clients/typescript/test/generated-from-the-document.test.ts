import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gatewayOpenApiDocument } from '../../../gateway/src/openapi/document';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');

test('the client is generated from the published document as it is now (npm run generate -w clients/typescript)', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'client-'));
  writeFileSync(join(directory, 'openapi.json'), JSON.stringify(gatewayOpenApiDocument(), null, 2));
  await run(
    join(ROOT, 'node_modules/.bin/openapi-typescript'),
    ['openapi.json', '--default-non-nullable', 'false', '--output', 'schema.ts'],
    { cwd: directory, timeout: 60_000 },
  );
  const regenerated = readFileSync(join(directory, 'schema.ts'), 'utf8');
  const committed = readFileSync(join(ROOT, 'clients/typescript/src/schema.ts'), 'utf8');
  expect(committed === regenerated).toBe(true);
}, 90_000);
