import { EventQuery, ReplayDeliveriesBody, VerifyWebhookBody } from '@affiliate/contracts';
import { createRouter, parseBody, parseQuery, programIdOf, setNextPageLink } from '@affiliate/platform';
import type { Router } from 'express';
import type { Dispatcher } from '../../domain/attempt-delivery';
import { findEvent, listEvents } from '../../domain/find-events';
import { replayDeliveries } from '../../domain/replay-deliveries';
import { verifyReceivedWebhook } from '../../domain/verify-webhook';

/** The stored events: GET /events, replaying them to an endpoint, and checking a received one's signature. */
export function eventRoutes(dispatcher: Dispatcher, scheduler: { nudge(): void }): Router {
  const { repositories, settings } = dispatcher;
  const router = createRouter();

  router.get('/events', async (request, response) => {
    const query = parseQuery(EventQuery, request);
    const programId = programIdOf(response);
    if (query.id !== undefined) {
      response.json(await findEvent(repositories, settings, programId, query.id));
      return;
    }
    const { items, nextCursor } = await listEvents(repositories, settings, programId, query);
    setNextPageLink(request, response, nextCursor, query.limit);
    response.json(items);
  });

  router.post('/webhook-deliveries/replay', async (request, response) => {
    const result = await replayDeliveries(repositories, settings, programIdOf(response), parseBody(ReplayDeliveriesBody, request));
    scheduler.nudge();
    response.json(result);
  });

  router.post('/webhook-endpoints/verify', async (request, response) => {
    response.json(await verifyReceivedWebhook(repositories, programIdOf(response), parseBody(VerifyWebhookBody, request)));
  });

  return router;
}
