import {
  CreateWebhookEndpointBody,
  DeleteWebhookEndpointBody,
  RecoverDeliveriesBody,
  RetryDeliveryBody,
  TestWebhookEndpointBody,
  UpdateWebhookEndpointBody,
  WebhookDeliveryQuery,
  WebhookEndpointQuery,
  WebhookSecretQuery,
  MAX_WEBHOOK_ENDPOINTS_CEILING,
  NoQuery,
} from '@affiliate/contracts';
import {
  createRouter,
  MAX_WEBHOOK_ENDPOINTS_HEADER,
  parseBody,
  parseQuery,
  periodOf,
  programIdOf,
  refuseListParametersBeside,
  setNextPageLink,
} from '@affiliate/platform';
import { type Router, type Request } from 'express';
import type { Dispatcher } from '../../domain/attempt-delivery';
import { createWebhookEndpoint } from '../../domain/create-webhook-endpoint';
import { deleteWebhookEndpoint } from '../../domain/delete-webhook-endpoint';
import { describeEventTypes } from '../../domain/event-catalogue';
import { listWebhookDeliveries } from '../../domain/find-webhook-deliveries';
import { findWebhookEndpoint, listWebhookEndpoints, revealWebhookSecret } from '../../domain/find-webhook-endpoints';
import { recoverDeliveries } from '../../domain/recover-deliveries';
import { resendDelivery } from '../../domain/resend-delivery';
import { testWebhookEndpoint } from '../../domain/test-webhook-endpoint';
import { updateWebhookEndpoint } from '../../domain/update-webhook-endpoint';
import { eventRoutes } from './event-routes';

/**
 * The program's endpoint cap, which the gateway forwards from the program's settings (20 unless the
 * operator set another) with every request. A request without it (only the gateway reaches this
 * service) gets the highest cap an operator can set, so one event still fans out to a bounded number.
 */
function limitsOf(request: Request): { maxWebhookEndpoints: number } {
  const forwarded = Number(request.header(MAX_WEBHOOK_ENDPOINTS_HEADER));
  const valid = Number.isInteger(forwarded) && forwarded >= 1 && forwarded <= MAX_WEBHOOK_ENDPOINTS_CEILING;
  return { maxWebhookEndpoints: valid ? forwarded : MAX_WEBHOOK_ENDPOINTS_CEILING };
}

export function webhookRoutes(dispatcher: Dispatcher, scheduler: { nudge(): void }): Router {
  const { repositories, settings, logger } = dispatcher;
  const router = createRouter();

  router.post('/webhook-endpoints', async (request, response) => {
    response.json(
      await createWebhookEndpoint(
        repositories,
        settings,
        programIdOf(response),
        parseBody(CreateWebhookEndpointBody, request),
        limitsOf(request),
      ),
    );
  });

  router.get('/webhook-endpoints', async (request, response) => {
    const query = parseQuery(WebhookEndpointQuery, request);
    const programId = programIdOf(response);
    if (query.id !== undefined) {
      refuseListParametersBeside(query, ['id']);
      response.json(await findWebhookEndpoint(repositories, programId, query.id));
      return;
    }
    const { items, nextCursor } = await listWebhookEndpoints(repositories, programId, query);
    setNextPageLink(request, response, nextCursor, query.limit);
    response.json(items);
  });

  router.get('/webhook-endpoints/secret', async (request, response) => {
    const { webhookEndpointId } = parseQuery(WebhookSecretQuery, request);
    response.json(await revealWebhookSecret(repositories, programIdOf(response), webhookEndpointId));
  });

  router.put('/webhook-endpoints', async (request, response) => {
    response.json(
      await updateWebhookEndpoint(repositories, settings, programIdOf(response), parseBody(UpdateWebhookEndpointBody, request)),
    );
  });

  router.delete('/webhook-endpoints', async (request, response) => {
    const body = parseBody(DeleteWebhookEndpointBody, request);
    const deleted = await deleteWebhookEndpoint(repositories, logger, programIdOf(response), body.webhookEndpointId);
    dispatcher.circuits.forget(body.webhookEndpointId);
    response.json(deleted);
  });

  router.post('/webhook-endpoints/test', async (request, response) => {
    const body = parseBody(TestWebhookEndpointBody, request);
    response.json(await testWebhookEndpoint(dispatcher, programIdOf(response), body.webhookEndpointId));
  });

  router.get('/webhook-deliveries', async (request, response) => {
    const query = parseQuery(WebhookDeliveryQuery, request);
    const { endpointId, eventId, status, eventType } = query;
    const filter = { endpointId, eventId, status, eventType, createdAt: periodOf(query, 'createdAt') };
    const { items, nextCursor } = await listWebhookDeliveries(repositories, programIdOf(response), filter, query);
    setNextPageLink(request, response, nextCursor, query.limit);
    response.json(items);
  });

  router.post('/webhook-deliveries/retry', async (request, response) => {
    const body = parseBody(RetryDeliveryBody, request);
    response.json(await resendDelivery(dispatcher, programIdOf(response), body.deliveryId));
  });

  router.post('/webhook-deliveries/recover', async (request, response) => {
    const result = await recoverDeliveries(repositories, settings, programIdOf(response), parseBody(RecoverDeliveriesBody, request));
    scheduler.nudge();
    response.json(result);
  });

  router.get('/event-types', (request, response) => {
    parseQuery(NoQuery, request);
    response.json(describeEventTypes());
  });

  router.use(eventRoutes(dispatcher, scheduler));

  return router;
}
