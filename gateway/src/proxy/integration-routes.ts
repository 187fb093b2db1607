import { Uuid } from '@affiliate/contracts';
import { createRouter, INTERNAL_TOKEN_HEADER, notFound, PROGRAM_ID_HEADER, REQUEST_ID_HEADER } from '@affiliate/platform';
import { type Router, type RequestHandler } from 'express';
import { findLiveProgram } from '../admin/programs';
import type { ProgramRepository } from '../admin/program-model';
import { readBody } from './api-routes';
import type { UpstreamProxy } from './upstream-proxy';

export type IntegrationRoutesOptions = {
  programs: ProgramRepository;
  /** The sale service, which verifies and handles payment-provider webhooks. */
  sale: UpstreamProxy;
  /** Per client address: the route needs no credential (the provider's signature is checked by the service). */
  anonymous: RequestHandler;
  internalToken: string;
  bodyLimit: string;
};

/** Where a program's Stripe webhook is forwarded inside: the program comes from the URL, set here, never from the sender. */
export const STRIPE_WEBHOOK_UPSTREAM_PATH = '/internal/integrations/stripe/webhooks';

/**
 * Webhooks from payment providers: `POST /integrations/stripe/{programId}/webhooks`, outside
 * /api/v1 because Stripe presents no API key; the Stripe-Signature, made with the program's own
 * secret, is what authenticates it, and the sale service checks it on the exact bytes received:
 * the body is forwarded untouched, labelled as opaque bytes so that no JSON parser on the way reads it.
 */
export function integrationRoutes(options: IntegrationRoutesOptions): Router {
  const router = createRouter();
  const knownProgram: RequestHandler = async (request, response, next) => {
    const programId = String(request.params.programId ?? '');
    // A made-up program goes no further than here: no body is read and no service is asked.
    if (!Uuid.safeParse(programId).success || !(await findLiveProgram(options.programs, programId))) {
      throw notFound(`No program with id ${programId}`);
    }
    response.locals.webhookProgramId = programId;
    next();
  };
  router.post(
    '/integrations/stripe/:programId/webhooks',
    options.anonymous,
    knownProgram,
    readBody(options.bodyLimit),
    (request, response) => {
      const programId = String(response.locals.webhookProgramId);
      request.url = STRIPE_WEBHOOK_UPSTREAM_PATH;
      return options.sale.forward(request, response, {
        programId,
        headers: {
          [INTERNAL_TOKEN_HEADER]: options.internalToken,
          [PROGRAM_ID_HEADER]: programId,
          [REQUEST_ID_HEADER]: String(response.locals.requestId),
          'content-type': 'application/octet-stream',
        },
        body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
    },
  );
  return router;
}
