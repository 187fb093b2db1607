import { createRouter } from '@affiliate/platform';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import express, { type Router } from 'express';

/**
 * Only this origin, for everything: no inline script or style, no other host to load from or talk
 * to, no framing. The console calls the same public and admin APIs as any client.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The web console (the @affiliate/console package, built by `npm run build`) at /console. */
export function consoleRoutes(): Router {
  const router = createRouter();
  const built = join(dirname(require.resolve('@affiliate/console/package.json')), 'dist');
  const page = existsSync(join(built, 'index.html')) ? readFileSync(join(built, 'index.html'), 'utf8') : null;
  const secured: express.RequestHandler = (_request, response, next) => {
    response.setHeader('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('Referrer-Policy', 'no-referrer');
    next();
  };
  router.get(['/console', '/console/'], secured, (_request, response) => {
    if (!page) {
      response.status(503).type('text/plain').send('The console is not built: run npm run build');
      return;
    }
    response.type('html').send(page);
  });
  router.use('/console/assets', secured, express.static(join(built, 'assets'), { index: false, maxAge: '1h', fallthrough: true }));
  return router;
}
