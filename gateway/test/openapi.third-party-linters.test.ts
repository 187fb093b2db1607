import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gatewayOpenApiDocument } from '../src/openapi/document';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/** The published document, written where the linters can read it. */
function publishedDocument(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
  writeFileSync(path, JSON.stringify(gatewayOpenApiDocument()));
  return path;
}

const outcomeOf = (command: Promise<{ stdout: string; stderr: string }>) =>
  command.then(
    ({ stdout, stderr }) => ({ code: 0, output: `${stdout}\n${stderr}` }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, output: `${error.stdout ?? ''}\n${error.stderr ?? ''}` }),
  );

test('Redocly CLI finds no error in the published document', async () => {
  const outcome = await outcomeOf(run(bin('redocly'), ['lint', publishedDocument(), '--config', join(ROOT, 'gateway/openapi/redocly.yaml')], { timeout: 120_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }));
  expect({ code: outcome.code, valid: /Your API description is valid/.test(outcome.output) }).toEqual({ code: 0, valid: true });
}, 150_000);

test('Spectral finds no error in the published document', async () => {
  const outcome = await outcomeOf(run(bin('spectral'), ['lint', publishedDocument(), '--ruleset', join(ROOT, 'gateway/openapi/spectral.yaml'), '--fail-severity', 'error', '--format', 'json'], { timeout: 120_000 }));
  const errors = (JSON.parse(outcome.output.slice(outcome.output.indexOf('['), outcome.output.lastIndexOf(']') + 1) || '[]') as { severity: number; code: string; path: string[] }[]).filter(
    (problem) => problem.severity === 0,
  );
  expect({ code: outcome.code, errors }).toEqual({ code: 0, errors: [] });
}, 150_000);
