import { createRouter } from '@affiliate/platform';
import { dirname } from 'node:path';
import express, { type Router } from 'express';
import { gatewayOpenApiDocument } from '../openapi/document';

const DOCS_PAGE = `<!doctype html>
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
const CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** What the docs page loads from swagger-ui-dist. */
const DOCS_ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

/** GET /api/v1/openapi.json and the docs page at /docs, with swagger-ui-dist served from node_modules. */
export function docsRoutes(): Router {
  const router = createRouter();
  const document = JSON.stringify(gatewayOpenApiDocument());
  const assets = dirname(require.resolve('swagger-ui-dist/package.json'));

  router.get('/api/v1/openapi.json', (_request, response) => {
    response.type('application/json').send(document);
  });
  router.get('/docs', (_request, response) => {
    response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    response.type('html').send(DOCS_PAGE);
  });
  router.get('/docs/init.js', (_request, response) => {
    response.type('application/javascript').send(INIT_SCRIPT);
  });
  // The files the page uses and nothing else: swagger-ui-dist also ships its stock index.html (which
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
