// Bundles the console into dist/ (served by the gateway at /console): one script, one stylesheet,
// one page; and the affiliate portal beside it (served at /portal), with the same setup and charts. Everything the page needs is in these files: nothing is loaded from another origin.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'dist');
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: { app: join(here, 'src/main.tsx'), portal: join(here, 'src/portal/main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: join(out, 'assets'),
  legalComments: 'linked',
  logLevel: 'warning',
});
copyFileSync(join(here, 'src/index.html'), join(out, 'index.html'));
// The portal's page is the console's with its own title, bundle and root, so the two shells never drift apart.
const consolePage = readFileSync(join(here, 'src/index.html'), 'utf8');
const portalPage = consolePage
  .replace('<title>Affiliate console</title>', '<title>Affiliate portal</title>')
  .replaceAll('/console/assets/app.', '/portal/assets/portal.');
if (portalPage.match(/\/portal\/assets\/portal\./g)?.length !== 2)
  throw new Error('console/src/index.html changed shape: the portal page could not be made from it');
writeFileSync(join(out, 'portal.html'), portalPage);
// The API reference at /docs is Redoc's standalone bundle, copied from npm at build time: served
// by the gateway from here, so a production image carries the file without carrying redoc's dependencies.
const require = createRequire(import.meta.url);
mkdirSync(join(out, 'docs'), { recursive: true });
copyFileSync(require.resolve('redoc/bundles/redoc.standalone.js.LICENSE.txt'), join(out, 'docs', 'redoc.standalone.js.LICENSE.txt'));
// Redoc's attribution in the side menu shows a logo from its CDN, with no option to turn it off: the
// page's CSP would refuse it (and offline it is a broken image), so it becomes an inline blank image.
const REDOC_CDN_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';
const redoc = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
if (redoc.split(REDOC_CDN_LOGO).length !== 2) throw new Error('redoc.standalone.js changed: its CDN logo was not found exactly once');
writeFileSync(
  join(out, 'docs', 'redoc.standalone.js'),
  redoc.replace(REDOC_CDN_LOGO, `"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E"`),
);
