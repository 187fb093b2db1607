import { createRouter } from '@affiliate/platform';
import express, { type Router } from 'express';
import MarkdownIt from 'markdown-it';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../console/routes';
import { gatewayOpenApiDocument } from '../openapi/document';

/** The guides under docs/guides, in reading order: /docs/guides/<name> serves docs/guides/<name>.md. */
export const GUIDES = [
  { name: 'quick-start', title: 'Quick start' },
  { name: 'authentication', title: 'Authentication and keys' },
  { name: 'errors', title: 'Errors' },
  { name: 'pagination', title: 'Pagination' },
  { name: 'idempotency', title: 'Idempotency' },
  { name: 'rate-limits', title: 'Rate limits' },
  { name: 'webhooks', title: 'Webhooks' },
  { name: 'commissions-and-payouts', title: 'Commissions and payouts' },
] as const;

const { escapeHtml } = new MarkdownIt().utils;

/** gateway/dist/docs and gateway/src/docs are both three levels below the repository (and /app in the image). */
const GUIDES_DIRECTORY = join(__dirname, '..', '..', '..', 'docs', 'guides');

const guideLinks = (current?: string) =>
  GUIDES.map(
    ({ name, title }) => `<a href="/docs/guides/${name}"${name === current ? ' aria-current="page"' : ''}>${escapeHtml(title)}</a>`,
  ).join('\n    ');

/** Redoc (the reference), under a bar that links every guide and the explorer. */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Affiliate Program Service API</title>
  <link rel="stylesheet" href="/docs/guides.css">
</head>
<body>
  <nav class="docs-bar" aria-label="Guides">
    <a href="/docs"><strong>API reference</strong></a>
    ${guideLinks()}
    <a href="/docs/explorer">Try it (explorer)</a>
  </nav>
  <main id="redoc"></main>
  <script src="/docs/assets/redoc.standalone.js"></script>
  <script src="/docs/reference.js"></script>
</body>
</html>
`;

const REFERENCE_SCRIPT = `Redoc.init('/api/v1/openapi.json', {
  expandResponses: '200,201',
  jsonSampleExpandLevel: 3,
  hideDownloadButton: false,
  scrollYOffset: '.docs-bar',
}, document.getElementById('redoc'));
`;

/** The Swagger UI explorer, for trying requests with a key. */
const EXPLORER_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Affiliate Program Service API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** A guide's page: this origin only, no script at all (the console's policy). */
function guidePage(title: string, html: string, current: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} · Affiliate Program Service API</title>
  <link rel="stylesheet" href="/docs/guides.css">
</head>
<body>
  <nav class="docs-bar" aria-label="Guides">
    <a href="/docs"><strong>API reference</strong></a>
    ${guideLinks(current)}
    <a href="/docs/explorer">Try it (explorer)</a>
  </nav>
  <main class="guide">
${html}
  </main>
</body>
</html>
`;
}

const GUIDES_STYLESHEET = `body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; }
.docs-bar { position: sticky; top: 0; z-index: 10; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0.6rem 1.25rem; background: #12263a; }
.docs-bar a { color: #ffffff; text-decoration: none; font-size: 0.9rem; }
.docs-bar a:hover, .docs-bar a[aria-current] { text-decoration: underline; }
.guide { max-width: 52rem; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; }
.guide a { color: #0b57a4; }
.guide code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f3f4f6; padding: 0.1em 0.3em; border-radius: 3px; }
.guide pre { background: #f6f8fa; padding: 0.9rem 1rem; border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; }
.guide pre code { background: none; padding: 0; }
/* Redoc's samples wrap instead of scrolling sideways: a scrollable region would need keyboard focus (axe-core). */
#redoc pre { white-space: pre-wrap !important; overflow-wrap: anywhere; overflow: visible !important; max-height: none !important; }
.guide table { border-collapse: collapse; margin: 1rem 0; }
.guide th, .guide td { border: 1px solid #d0d7de; padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
`;

// validatorUrl null: Swagger UI would otherwise fetch a badge from validator.swagger.io.
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: '/api/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

// Everything from this origin: the page works offline and nothing is loaded from a CDN.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Redoc builds its search index in a worker made from a blob of its own bundle: only a script this
 * origin already served can create one, and nothing else is loosened.
 */
const REFERENCE_CONTENT_SECURITY_POLICY = `${CONTENT_SECURITY_POLICY}; worker-src 'self' blob:`;

/** What the explorer loads from swagger-ui-dist. */
const DOCS_ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

/**
 * GET /api/v1/openapi.json; the reference at /docs (Redoc, copied from npm into the console's build:
 * no CDN); the guides at /docs/guides/<name>, rendered from docs/guides with markdown-it (raw HTML
 * off, so a guide is text and links only); and the Swagger UI explorer at /docs/explorer.
 */
export function docsRoutes(): Router {
  const router = createRouter();
  const document = JSON.stringify(gatewayOpenApiDocument());
  const assets = dirname(require.resolve('swagger-ui-dist/package.json'));
  const redoc = join(dirname(require.resolve('@affiliate/console/package.json')), 'dist', 'docs');
  const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });
  // Rendered once at start: a guide is part of the release, like the document.
  const guides = new Map<string, string>(
    GUIDES.filter(({ name }) => existsSync(join(GUIDES_DIRECTORY, `${name}.md`))).map(({ name, title }) => [
      name,
      guidePage(title, markdown.render(readFileSync(join(GUIDES_DIRECTORY, `${name}.md`), 'utf8')), name),
    ]),
  );
  const guideHeaders = (response: express.Response) => {
    response.setHeader('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
    response.setHeader('X-Content-Type-Options', 'nosniff');
  };

  router.get('/api/v1/openapi.json', (_request, response) => {
    response.type('application/json').send(document);
  });
  router.get('/docs', (_request, response) => {
    response.setHeader('Content-Security-Policy', REFERENCE_CONTENT_SECURITY_POLICY);
    response.type('html').send(DOCS_PAGE);
  });
  router.get('/docs/reference.js', (_request, response) => {
    response.type('application/javascript').send(REFERENCE_SCRIPT);
  });
  router.get('/docs/explorer', (_request, response) => {
    response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    response.type('html').send(EXPLORER_PAGE);
  });
  router.get('/docs/init.js', (_request, response) => {
    response.type('application/javascript').send(INIT_SCRIPT);
  });
  router.get('/docs/guides.css', (_request, response) => {
    guideHeaders(response);
    response.type('text/css').send(GUIDES_STYLESHEET);
  });
  router.get(['/docs/guides', '/docs/guides/'], (_request, response) => response.redirect(302, `/docs/guides/${GUIDES[0].name}`));
  router.get('/docs/guides/:name', (request, response, next) => {
    const page = guides.get(String(request.params.name));
    if (!page) return next();
    guideHeaders(response);
    return response.type('html').send(page);
  });
  router.get('/docs/assets/redoc.standalone.js', (_request, response, next) => {
    if (!existsSync(join(redoc, 'redoc.standalone.js'))) return next();
    response.setHeader('X-Content-Type-Options', 'nosniff');
    return response.sendFile(join(redoc, 'redoc.standalone.js'), { maxAge: '1d' });
  });
  // The files the explorer uses and nothing else: swagger-ui-dist also ships its stock index.html (which
  // loads an outside petstore document) and oauth2-redirect.html, which are never served.
  const serve = express.static(assets, { index: false, maxAge: '1d', fallthrough: true });
  router.use('/docs/assets', (request, response, next) => {
    if (!DOCS_ASSETS.has(request.path.slice(1))) return next();
    response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    response.setHeader('X-Content-Type-Options', 'nosniff');
    return serve(request, response, next);
  });
  return router;
}
