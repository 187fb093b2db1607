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
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      output: `${error.stdout ?? ''}\n${error.stderr ?? ''}`,
    }),
  );

/** Each problem a linter reports, whatever its severity, as one line that says where and what. */
const described = (problems: { where: string; rule: string; message: string }[]) =>
  problems.map(({ where, rule, message }) => `${rule} ${where}: ${message}`);

test('Redocly CLI finds nothing in the published document, not even a warning', async () => {
  const outcome = await outcomeOf(
    run(bin('redocly'), ['lint', publishedDocument(), '--config', join(ROOT, 'gateway/openapi/redocly.yaml'), '--format', 'json'], {
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }),
  );
  const report = JSON.parse(outcome.output.slice(outcome.output.indexOf('{'), outcome.output.lastIndexOf('}') + 1)) as {
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  };
  const problems = described(
    report.problems.map((problem) => ({
      where: problem.location[0]?.pointer ?? '',
      rule: `${problem.severity} ${problem.ruleId}`,
      message: problem.message,
    })),
  );
  expect({ code: outcome.code, problems }).toEqual({ code: 0, problems: [] });
}, 150_000);

test('Spectral finds nothing in the published document, not even a warning or a hint', async () => {
  const outcome = await outcomeOf(
    run(
      bin('spectral'),
      [
        'lint',
        publishedDocument(),
        '--ruleset',
        join(ROOT, 'gateway/openapi/spectral.yaml'),
        '--fail-severity',
        'hint',
        '--format',
        'json',
      ],
      {
        timeout: 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    ),
  );
  const found = JSON.parse(outcome.output.slice(outcome.output.indexOf('['), outcome.output.lastIndexOf(']') + 1) || '[]') as {
    severity: number;
    code: string;
    path: string[];
    message: string;
  }[];
  const problems = described(
    found.map((problem) => ({
      where: problem.path.join('/'),
      rule: `severity ${problem.severity} ${problem.code}`,
      message: problem.message,
    })),
  );
  expect({ code: outcome.code, problems }).toEqual({ code: 0, problems: [] });
}, 150_000);
