import { signWebhook, verifyWebhook, webhookSignatureHeader, WebhookVerificationError } from '@affiliate/contracts';
import { Webhook } from 'standardwebhooks';
import vectors from '../test-vectors/signature.json';

const [single, rotation] = vectors.vectors as [(typeof vectors.vectors)[number], (typeof vectors.vectors)[number]];

const headersOf = (vector: { id: string; timestamp: number }, signature: string) => ({
  'webhook-id': vector.id,
  'webhook-timestamp': String(vector.timestamp),
  'webhook-signature': signature,
});
const atVectorTime = (vector: { timestamp: number }) => ({ now: new Date(vector.timestamp * 1000) });

test.each(vectors.vectors)('the dispatcher signs the published test vector "$name" exactly', (vector) => {
  expect(webhookSignatureHeader(vector.secrets, vector.id, vector.timestamp, vector.body)).toBe(vector.expectedSignatureHeader);
});

test.each(vectors.vectors)('the standardwebhooks library agrees with the test vector "$name"', (vector) => {
  const signatures = vector.secrets.map((secret) => new Webhook(secret).sign(vector.id, new Date(vector.timestamp * 1000), vector.body));
  expect(signatures.join(' ')).toBe(vector.expectedSignatureHeader);
});

test('the verification helper accepts the test vector and returns the parsed body', () => {
  const payload = verifyWebhook(
    single.body,
    headersOf(single, single.expectedSignatureHeader),
    single.secrets[0] as string,
    atVectorTime(single),
  );
  expect(payload).toEqual(JSON.parse(single.body));
});

test('during a rotation a subscriber holding either secret verifies the message', () => {
  for (const secret of rotation.secrets) {
    expect(() =>
      verifyWebhook(rotation.body, headersOf(rotation, rotation.expectedSignatureHeader), secret, atVectorTime(rotation)),
    ).not.toThrow();
  }
});

test('a subscriber may hold several secrets: any one that matches passes', () => {
  const otherSecret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  expect(() =>
    verifyWebhook(
      single.body,
      headersOf(single, single.expectedSignatureHeader),
      [otherSecret, single.secrets[0] as string],
      atVectorTime(single),
    ),
  ).not.toThrow();
});

test('a tampered body fails verification', () => {
  const tampered = single.body.replace('sale.deleted', 'sale.created');
  expect(() =>
    verifyWebhook(tampered, headersOf(single, single.expectedSignatureHeader), single.secrets[0] as string, atVectorTime(single)),
  ).toThrow(WebhookVerificationError);
});

test('a timestamp more than 5 minutes away fails verification, even with a valid signature', () => {
  const later = { now: new Date((single.timestamp + 301) * 1000) };
  expect(() => verifyWebhook(single.body, headersOf(single, single.expectedSignatureHeader), single.secrets[0] as string, later)).toThrow(
    /tolerance/,
  );
  const earlier = { now: new Date((single.timestamp - 301) * 1000) };
  expect(() => verifyWebhook(single.body, headersOf(single, single.expectedSignatureHeader), single.secrets[0] as string, earlier)).toThrow(
    /tolerance/,
  );
});

test('a wrong secret, a missing header or a malformed timestamp fail verification', () => {
  const secret = single.secrets[0] as string;
  const headers = headersOf(single, single.expectedSignatureHeader);
  expect(() => verifyWebhook(single.body, headers, 'whsec_' + Buffer.alloc(32, 1).toString('base64'), atVectorTime(single))).toThrow(
    WebhookVerificationError,
  );
  expect(() => verifyWebhook(single.body, { ...headers, 'webhook-signature': undefined }, secret, atVectorTime(single))).toThrow(/Missing/);
  expect(() => verifyWebhook(single.body, { ...headers, 'webhook-timestamp': '1e9' }, secret, atVectorTime(single))).toThrow(
    /number of seconds/,
  );
  expect(() =>
    verifyWebhook(
      single.body,
      { ...headers, 'webhook-signature': 'v2,' + single.expectedSignatureHeader.slice(3) },
      secret,
      atVectorTime(single),
    ),
  ).toThrow(WebhookVerificationError);
});

test('a signature made now by the dispatcher verifies with the standardwebhooks library and with the helper', () => {
  const secret = single.secrets[0] as string;
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = headersOf({ id: single.id, timestamp }, signWebhook(secret, single.id, timestamp, single.body));
  expect(new Webhook(secret).verify(single.body, headers)).toEqual(JSON.parse(single.body));
  expect(verifyWebhook(Buffer.from(single.body), new Headers(headers), secret)).toEqual(JSON.parse(single.body));
});
