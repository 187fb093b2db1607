// The integrator's journey with the packed SDK, compiled and run in a scratch project where
// `@affiliate/client` is installed from its tarball (system-tests/test/typescript-sdk.test.ts).
// It prints one JSON line of what it saw; the test holds it to what the system did.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AffiliateApiError, API_VERSION, createAffiliateClient, verifyWebhook, WebhookVerificationError } from '@affiliate/client';

async function journey() {
  const client = createAffiliateClient({ baseUrl: process.env.GATEWAY_URL ?? '', apiKey: process.env.API_KEY ?? '' });
  const received: { body: string; headers: IncomingHttpHeaders }[] = [];
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = await client.webhookEndpoints.create({
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
    eventTypes: ['sale.created'],
  });

  const affiliate = await client.affiliates.create({ firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' });
  const coupon = await client.coupons.create({ name: 'Journey', percentOff: 10 });
  await client.promotionalCodes.create({ couponId: coupon.id, code: 'JOURNEY10', affiliateId: affiliate.id });
  const recorded: string[] = [];
  for (const order of [1, 2, 3])
    recorded.push((await client.sales.create({ promoCode: 'journey10', totalEarned: 10 * order, externalId: `order_${order}` })).id);

  const listed: string[] = [];
  for await (const sale of client.sales.list({ limit: 1 })) listed.push(sale.id);

  let refused: unknown;
  try {
    await client.sales.create({ promoCode: 'NO-SUCH-CODE', totalEarned: 1 });
  } catch (error) {
    if (error instanceof AffiliateApiError) refused = { status: error.status, message: error.message, requestId: error.requestId };
  }

  for (const deadline = Date.now() + 60_000; received.length === 0 && Date.now() < deadline;)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const delivery = received[0];
  if (!delivery) throw new Error('no webhook arrived within 60 s');
  const event = verifyWebhook(delivery.body, delivery.headers, endpoint.secret ?? '');
  let tampered: unknown;
  try {
    verifyWebhook(delivery.body.replace(/"totalEarned":\s*\d+/, '"totalEarned":1000000'), delivery.headers, endpoint.secret ?? '');
  } catch (error) {
    if (error instanceof WebhookVerificationError) tampered = error.failure;
  }
  receiver.close();
  return {
    version: API_VERSION,
    affiliateId: affiliate.id,
    recorded,
    listed,
    refused,
    event: { id: event.id, type: event.event, webhookId: delivery.headers['webhook-id'] },
    tampered,
  };
}

journey().then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);
