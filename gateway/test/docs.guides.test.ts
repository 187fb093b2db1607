import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { examplePayloadOf, webhookSignatureHeader } from '@affiliate/contracts';
import express from 'express';
import request from 'supertest';
import { docsRoutes, GUIDES } from '../src/docs/routes';

const ROOT = join(__dirname, '..', '..');
const GUIDES_DIRECTORY = join(ROOT, 'docs', 'guides');
const app = express().use(docsRoutes());

test('every guide under docs/guides is served at /docs/guides/<name>, under the console CSP, and linked from the reference page and every guide', async () => {
  const files = readdirSync(GUIDES_DIRECTORY)
    .filter((file) => file.endsWith('.md'))
    .map((file) => file.replace(/\.md$/, ''));
  expect(GUIDES.map(({ name }) => name).sort()).toEqual(files.sort());
  const reference = await request(app).get('/docs').expect(200);
  for (const { name, title } of GUIDES) {
    expect(reference.text).toContain(`href="/docs/guides/${name}"`);
    const guide = await request(app)
      .get(`/docs/guides/${name}`)
      .expect(200)
      .expect('content-type', /text\/html/);
    expect(guide.headers['content-security-policy']).toContain("default-src 'none'");
    expect(guide.text).toContain(`<h1>${title}</h1>`);
    for (const other of GUIDES) expect(guide.text).toContain(`href="/docs/guides/${other.name}"`);
  }
  await request(app).get('/docs/guides/no-such-guide').expect(404);
});

test('a guide is text: raw HTML in the markdown is shown, never run', async () => {
  const guides = await Promise.all(GUIDES.map(({ name }) => request(app).get(`/docs/guides/${name}`)));
  for (const guide of guides) expect(guide.text).not.toMatch(/<script/i);
});

/** The fenced block of the webhooks guide whose code contains `marker`. */
function snippet(language: string, marker: string): string {
  const guide = readFileSync(join(GUIDES_DIRECTORY, 'webhooks.md'), 'utf8');
  const block = [...guide.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))]
    .map((match) => match[1]!)
    .find((code) => code.includes(marker));
  if (!block) throw new Error(`no ${language} block with ${marker} in docs/guides/webhooks.md`);
  return block;
}

/** A delivery signed as the dispatcher signs it (contracts' Standard Webhooks signer), during a rotation: two secrets. */
function signedDelivery() {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const previous = `whsec_${randomBytes(32).toString('base64')}`;
  const payload = examplePayloadOf('sale.created');
  const body = JSON.stringify(payload);
  const EVENT_ID = payload.id;
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'webhook-id': EVENT_ID,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignatureHeader([secret, previous], EVENT_ID, timestamp, body),
  };
  return { secret, previous, body, headers };
}

type Case = { body: string; headers: Record<string, string>; secret: string };
const cases = () => {
  const delivery = signedDelivery();
  const cases: Record<string, Case> = {
    valid: delivery,
    'valid with the previous secret': { ...delivery, secret: delivery.previous },
    're-serialized body': { ...delivery, body: JSON.stringify(JSON.parse(delivery.body), null, 2) },
    'wrong secret': { ...delivery, secret: `whsec_${randomBytes(32).toString('base64')}` },
    'old timestamp': { ...delivery, headers: { ...delivery.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) } },
  };
  return cases;
};
const EXPECTED = {
  valid: 'valid',
  'valid with the previous secret': 'valid',
  're-serialized body': 'refused',
  'wrong secret': 'refused',
  'old timestamp': 'refused',
};

test("the webhooks guide's TypeScript snippet verifies a real signed webhook and refuses an altered one", () => {
  const directory = mkdtempSync(join(tmpdir(), 'verify-ts-'));
  const file = join(directory, 'verify.ts');
  writeFileSync(
    file,
    `${snippet('ts', 'function verifyWebhook')}
const cases = JSON.parse(process.argv[2]!) as Record<string, { body: string; headers: Record<string, string>; secret: string }>;
const outcomes: Record<string, string> = {};
for (const [name, { body, headers, secret }] of Object.entries(cases)) {
  try {
    const event = verifyWebhook(body, headers, secret) as { event: string };
    outcomes[name] = event.event === 'sale.created' ? 'valid' : 'wrong event';
  } catch {
    outcomes[name] = 'refused';
  }
}
console.log(JSON.stringify(outcomes));
`,
  );
  const output = execFileSync(join(ROOT, 'node_modules/.bin/tsx'), [file, JSON.stringify(cases())], { encoding: 'utf8' });
  expect(JSON.parse(output)).toEqual(EXPECTED);
}, 60_000);

test("the webhooks guide's Python snippet verifies a real signed webhook and refuses an altered one", () => {
  const script = `${snippet('python', 'def verify_webhook')}

import sys
outcomes = {}
for name, case in json.loads(sys.argv[1]).items():
    try:
        event = verify_webhook(case["body"].encode(), case["headers"], case["secret"])
        outcomes[name] = "valid" if event["event"] == "sale.created" else "wrong event"
    except ValueError:
        outcomes[name] = "refused"
print(json.dumps(outcomes))
`;
  const output = execFileSync('python3', ['-c', script, JSON.stringify(cases())], { encoding: 'utf8' });
  expect(JSON.parse(output)).toEqual(EXPECTED);
});
