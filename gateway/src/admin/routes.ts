import { CreateProgramBody, ListQuery, UpdateProgramBody } from '@affiliate/contracts';
import { constantTimeEquals, parseBody, parseQuery, unauthorized } from '@affiliate/platform';
import express, { Router, type RequestHandler } from 'express';
import { createApiKey, listApiKeys, revokeApiKey, type AdminStore } from './api-keys';
import { createProgram, deleteProgram, getProgram, listPrograms, updateProgram } from './programs';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function requireAdmin(adminToken: string): RequestHandler {
  return (request, _response, next) => {
    const presented = BEARER.exec(request.header('authorization') ?? '')?.[1];
    if (!presented || !constantTimeEquals(presented, adminToken)) throw unauthorized('Missing or invalid admin token: send "Authorization: Bearer <ADMIN_TOKEN>"');
    next();
  };
}

export type AdminRoutesOptions = {
  store: AdminStore;
  adminToken: string;
  bodyLimit: string;
  /** Publish the program event now and drop cached key verdicts on this replica. */
  onChange: () => void;
};

/** DESIGN.md §6: operators manage programs and API keys; keys are shown once, on creation. */
export function adminRoutes(options: AdminRoutesOptions): Router {
  const { store } = options;
  const router = Router();
  router.use(requireAdmin(options.adminToken));
  router.use(express.json({ limit: options.bodyLimit }));
  const changed = <T>(result: T): T => {
    options.onChange();
    return result;
  };

  router.post('/programs', async (request, response) => {
    response.json(changed(await createProgram(store.programs, parseBody(CreateProgramBody, request))));
  });
  router.get('/programs', async (request, response) => {
    const page = parseQuery(ListQuery, request);
    const { items, nextCursor } = await listPrograms(store.programs, page);
    if (nextCursor) {
      const query = new URLSearchParams({ limit: String(page.limit ?? 100), startingAfter: nextCursor });
      response.setHeader('Link', `<${request.baseUrl}${request.path}?${query.toString()}>; rel="next"`);
    }
    response.json(items);
  });
  router.get('/programs/:id', async (request, response) => {
    response.json(await getProgram(store.programs, request.params.id));
  });
  router.put('/programs/:id', async (request, response) => {
    response.json(changed(await updateProgram(store.programs, request.params.id, parseBody(UpdateProgramBody, request))));
  });
  router.delete('/programs/:id', async (request, response) => {
    response.json(changed(await deleteProgram(store.programs, request.params.id)));
  });
  router.post('/programs/:id/api-keys', async (request, response) => {
    response.setHeader('Cache-Control', 'no-store');
    response.json(await createApiKey(store, request.params.id));
  });
  router.get('/programs/:id/api-keys', async (request, response) => {
    await getProgram(store.programs, request.params.id);
    response.json(await listApiKeys(store, request.params.id));
  });
  router.delete('/api-keys/:id', async (request, response) => {
    response.json(changed(await revokeApiKey(store, request.params.id)));
  });
  return router;
}
