import { ConfigureStripeBody, NoQuery } from '@affiliate/contracts';
import { createRouter, parseBody, parseQuery, programIdOf, type ServiceContext } from '@affiliate/platform';
import express, { type Router, type Response } from 'express';
import type { SaleDependencies } from '../../domain/sale-dependencies';
import { configureStripe, stripeIntegrationOf } from '../../domain/stripe-settings';
import { receiveStripeEvent } from '../../domain/stripe-webhooks';

/** Answers derived from a secret are never kept by a cache on the way. */
const noStore = (response: Response) => response.setHeader('Cache-Control', 'no-store');

/**
 * The program's Stripe connection (/integrations/stripe, through the gateway's API), and the
 * webhook Stripe posts to, which the gateway forwards to /internal/... with the program of the URL.
 */
export function stripeRoutes(_context: ServiceContext, deps: SaleDependencies): Router {
  const router = createRouter();

  router.get('/integrations/stripe', async (request, response) => {
    parseQuery(NoQuery, request);
    noStore(response);
    response.json(await stripeIntegrationOf(deps.repositories, programIdOf(response)));
  });

  router.put('/integrations/stripe', async (request, response) => {
    noStore(response);
    const body = parseBody(ConfigureStripeBody, request);
    response.json(await configureStripe(deps.repositories, programIdOf(response), body));
  });

  // The signature covers the exact bytes Stripe sent: the body is read raw, never parsed and re-serialised.
  router.post('/internal/integrations/stripe/webhooks', express.raw({ type: () => true, limit: '1mb' }), async (request, response) => {
    const payload = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    response.json(await receiveStripeEvent(deps, programIdOf(response), payload, request.header('stripe-signature')));
  });

  return router;
}
