import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import express from 'express';
import { docsRoutes } from '../src/docs/routes';
test('axe', async () => {
  const server = express().use(docsRoutes()).listen(0);
  const port = (server.address() as { port: number }).port;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`http://127.0.0.1:${port}/docs`);
  await page.waitForSelector('[data-section-id="operation/createSale"]', { timeout: 60000 });
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const v = await page.evaluate(`axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, n: v.nodes.length, nodes: v.nodes.map((node) => node.target.join(' ')).slice(0, 2), html: v.nodes.slice(0,1).map((node) => node.html.slice(0,200)) })))`);
  console.log(JSON.stringify(v, null, 1));
  await browser.close();
  server.close();
}, 300000);
