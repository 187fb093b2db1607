import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * SECURITY.md and RELIABILITY.md prove each defence by naming a test file and the tests in it. A
 * renamed or moved test must not leave a row citing what no longer exists: each quoted name in a row's
 * last cell is looked up among the titles of the test file cited before it (`…` ends a cited prefix,
 * `%s` stands for a test.each parameter).
 */
const root = join(__dirname, '..', '..');
const testFiles = readdirSync(root, { recursive: true })
  .map(String)
  .filter((path) => path.endsWith('.test.ts') && /(^|\/)test\//.test(path) && !/node_modules|\/dist\//.test(path));

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The test files a citation names: a path, the end of one, or a pattern with `*`. */
function filesNamed(cited: string): string[] {
  const pattern = new RegExp(
    `(^|/)${cited
      .split('*')
      .map((part) => escape(part))
      .join('[^/]*')}$`,
  );
  return testFiles.filter((path) => pattern.test(path));
}

/** The titles of a file's tests and describe blocks, as written (a test.each title keeps its `%s`). */
function titlesOf(path: string): string[] {
  const source = readFileSync(join(root, path), 'utf8');
  const titles: string[] = [];
  for (const match of source.matchAll(/\b(?:test|it|describe)(?:\.each\([^)]*\))?\(\s*(['"`])((?:\\.|(?!\1)[\s\S])*)\1/g))
    titles.push((match[2] ?? '').replace(/\\(['"`])/g, '$1'));
  return titles;
}

/** A cited name (whole, or a prefix ending in `…`) matches a title, `%s` in either standing for anything. */
function cites(name: string, title: string): boolean {
  const prefix = name.split('…')[0]?.replace(/[ ,.]+$/, '') ?? '';
  const pattern = (text: string) => new RegExp(`^${text.split('%s').map(escape).join('.*')}`);
  return pattern(prefix).test(title) || pattern(title).test(prefix) || title.startsWith(prefix);
}

function unresolvedCitations(document: string): string[] {
  const rows = readFileSync(join(root, document), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('|') && line.split('|').length >= 5);
  const problems: string[] = [];
  for (const row of rows) {
    const proof = row.split('|').at(-2) ?? '';
    let files: string[] = [];
    for (const match of proof.matchAll(/`([^`]+\.test\.ts)`|"([^"]+)"/g)) {
      if (match[1]) {
        files = filesNamed(match[1]);
        if (files.length === 0) problems.push(`${document}: no test file ${match[1]}`);
      } else if (files.length > 0) {
        const name = match[2] as string;
        if (!files.some((file) => titlesOf(file).some((title) => cites(name, title))))
          problems.push(`${document}: ${files.join(', ')} has no test "${name}"`);
      }
    }
  }
  return problems;
}

test.each(['SECURITY.md', 'RELIABILITY.md'])('every test %s cites exists under that name in the file it names', (document) => {
  expect(unresolvedCitations(document)).toEqual([]);
});
