// Bundles the console into dist/ (served by the gateway at /console): one script, one stylesheet,
// one page; and the affiliate portal beside it (served at /portal), with the same setup and charts. Everything the page needs is in these files: nothing is loaded from another origin.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
copyFileSync(join(here, 'src/portal.html'), join(out, 'portal.html'));
