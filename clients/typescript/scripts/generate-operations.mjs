// `npm run generate`, second step: from the OpenAPI document, the runtime facts the types alone
// cannot give: the document's version and, per resource (a path of one segment under /api/v1, and
// the reports under /api/v1/reports), its methods, whether its GET answers a list (an array, or
// either one object or an array) and whether that list pages with startingAfter. Writes src/operations.ts.
import { readFileSync, writeFileSync } from 'node:fs';

const [input, output] = process.argv.slice(2);
if (!input || !output) throw new Error('usage: generate-operations.mjs <openapi.json> <operations.ts>');
const document = JSON.parse(readFileSync(input, 'utf8'));
const METHODS = ['get', 'post', 'put', 'delete'];
const camelCase = (name) => name.replace(/-([a-z])/g, (_, letter) => letter.toUpperCase());

/** `sales` for /api/v1/sales; a report is named after what it reports on: `affiliateReports` for /api/v1/reports/affiliates. */
function resourceName(path) {
  const one = /^\/api\/v1\/([a-z-]+)$/.exec(path);
  if (one) return camelCase(one[1]);
  const report = /^\/api\/v1\/reports\/([a-z-]+)s$/.exec(path);
  return report ? camelCase(`${report[1]}-reports`) : null;
}

/** The JSON answer is an array, or either one object (a lookup by id) or an array. */
const answersArray = (schema) =>
  schema?.type === 'array' || Boolean(schema?.anyOf?.some(answersArray) || schema?.oneOf?.some(answersArray));

const resources = Object.entries(document.paths).flatMap(([path, item]) => {
  const name = resourceName(path);
  if (!name) return [];
  // An integrator's client calls with an API key: the console's own routes (a member's session, /api/v1/api-keys) are not its resources.
  const methods = METHODS.filter((method) => item[method]?.security?.some((scheme) => 'bearerAuth' in scheme));
  if (methods.length === 0) return [];
  const paged = Boolean(item.get?.parameters?.some((parameter) => parameter.in === 'query' && parameter.name === 'startingAfter'));
  // A list that does not page is one page: it gets an iterator all the same.
  const list = paged || answersArray(item.get?.responses?.['200']?.content?.['application/json']?.schema);
  return [
    `  ${name}: { path: '${path}', methods: [${methods.map((method) => `'${method}'`).join(', ')}], list: ${list}, paged: ${paged} },`,
  ];
});

writeFileSync(
  output,
  `// Generated from the OpenAPI document by scripts/generate-operations.mjs (npm run generate); do not edit.

/** The document's info.version: the package's version follows it. */
export const API_VERSION = '${document.info.version}';

/** Each resource of the public API: its path, its methods, whether its GET answers a list, and whether that list pages (Link header, startingAfter). */
export const RESOURCES = {
${resources.join('\n')}
} as const;
`,
);
