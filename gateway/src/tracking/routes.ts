import { createRouter } from '@affiliate/platform';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Router } from 'express';

/** The tracking script's source, shipped as written: plain ES2017, small enough that minifying would buy little. */
export const TRACKING_SCRIPT_PATH = join(__dirname, '..', '..', 'tracker', 'affiliate.js');

/**
 * /js/affiliate.js, for every shop's pages: cacheable (a strong ETag of its content, so a new
 * release is fetched again within the max-age; `?v=<etag>` URLs may be cached for a year), loadable
 * from any origin, and never sniffed as anything but a script.
 */
export function trackingScriptRoutes(): Router {
  const router = createRouter();
  const source = readFileSync(TRACKING_SCRIPT_PATH, 'utf8');
  const etag = `"${createHash('sha256').update(source).digest('base64url').slice(0, 16)}"`;
  router.get('/js/affiliate.js', (request, response) => {
    response.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    response.setHeader('ETag', etag);
    response.setHeader(
      'Cache-Control',
      request.query.v === etag.slice(1, -1) ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
    );
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    response.setHeader('Access-Control-Allow-Origin', '*');
    const known = (request.header('if-none-match') ?? '').split(',').map((tag) => tag.trim().replace(/^W\//, ''));
    if (known.includes(etag) || known.includes('*')) {
      response.status(304).end();
      return;
    }
    response.send(source);
  });
  return router;
}
