import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_OPERATIONS } from '@affiliate/contracts';
import { gatewayOpenApiDocument } from '../src/openapi/document';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

test('openapi-python-client generates a method for every operation, named by its operationId, without warnings about the document', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'python-client-'));
  writeFileSync(join(directory, 'openapi.json'), JSON.stringify(gatewayOpenApiDocument()));
  const output = join(directory, 'client');
  const { stdout, stderr } = await run('bash', [join(ROOT, 'scripts/python-client.sh'), join(directory, 'openapi.json'), output], {
    timeout: 280_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  // Its only warning may be the missing ruff formatter (a post-generation hook), never a skipped schema or endpoint.
  const warnings = `${stdout}\n${stderr}`
    .split('\n')
    .filter(
      (line) => /warning|unable|skipping|cannot|invalid/i.test(line) && !/Skipping Integration|some pieces may be missing/.test(line),
    );
  expect(warnings).toEqual([]);
  const missing = API_OPERATIONS.filter((operation) => {
    const tag = operation.tag.toLowerCase().replace(/ /g, '_');
    return !existsSync(join(output, 'api', tag, `${snake(operation.operationId)}.py`));
  }).map((operation) => operation.operationId);
  expect(missing).toEqual([]);
}, 300_000);
