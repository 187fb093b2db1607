import { randomUUID } from 'node:crypto';
import { activeSpanIds, notFound } from '@affiliate/platform';
import type { z } from 'zod';
import type { WebhookTestResult } from '@affiliate/contracts';
import { isDelivered } from '../data-access/subscriber-client';
import { toDeliveryAttempt } from '../data-access/webhook-deliveries';
import { toStoredAttempt, type Dispatcher } from './attempt-delivery';
import { webhookHeaders } from './signing';

/**
 * POST /webhook-endpoints/test: a signed `ping` sent at once, outside the delivery log, answered
 * with what the subscriber said. It is signed exactly like an event, so it also tests verification.
 */
export async function testWebhookEndpoint(
  dispatcher: Dispatcher,
  programId: string,
  webhookEndpointId: string,
): Promise<z.infer<typeof WebhookTestResult>> {
  const endpoint = await dispatcher.repositories.endpoints.byId(programId, webhookEndpointId);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${webhookEndpointId}`);
  const webhookId = randomUUID();
  const body = JSON.stringify({ id: webhookId, event: 'ping', createdAt: new Date().toISOString(), data: { webhookEndpointId } });
  // The caller waits through the gateway, so the subscriber gets less time than a delivery does:
  // a slow one is reported as a timed-out result, not left to become the gateway's timeout.
  const outcome = await dispatcher.client.send({
    url: endpoint.url,
    headers: webhookHeaders(endpoint, webhookId, body),
    body,
    timeoutMs: dispatcher.settings.testTimeoutMs,
  });
  return { ...toDeliveryAttempt(toStoredAttempt(outcome, activeSpanIds()?.traceId ?? null)), succeeded: isDelivered(outcome), webhookId };
}
