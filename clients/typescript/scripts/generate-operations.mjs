// `npm run generate`, second step: from the OpenAPI document, the runtime facts the types alone
// cannot give: the document's version and, per resource (a path of one segment under /api/v1),
// its methods and whether its GET pages with startingAfter. Writes src/operations.ts.
import { readFileSync, writeFileSync } from 'node:fs';

const [input, output] = process.argv.slice(2);
if (!input || !output) throw new Error('usage: generate-operations.mjs <openapi.json> <operations.ts>');
const document = JSON.parse(readFileSync(input, 'utf8'));
const METHODS = ['get', 'post', 'put', 'delete'];
const camelCase = (name) => name.replace(/-([a-z])/g, (_, letter) => letter.toUpperCase());

const resources = Object.entries(document.paths)
  .filter(([path]) => /^\/api\/v1\/[a-z-]+$/.test(path))
  .map(([path, item]) => {
    const methods = METHODS.filter((method) => item[method]);
    const paged = Boolean(item.get?.parameters?.some((parameter) => parameter.in === 'query' && parameter.name === 'startingAfter'));
    return `  ${camelCase(path.slice('/api/v1/'.length))}: { path: '${path}', methods: [${methods.map((method) => `'${method}'`).join(', ')}], paged: ${paged} },`;
  });

writeFileSync(
  output,
  `// Generated from the OpenAPI document by scripts/generate-operations.mjs (npm run generate); do not edit.

/** The document's info.version: the package's version follows it. */
export const API_VERSION = '${document.info.version}';

/** Each resource of the public API: its path, its methods and whether its list pages (Link header, startingAfter). */
export const RESOURCES = {
${resources.join('\n')}
} as const;
`,
);
