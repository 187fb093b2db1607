import {
  API_OPERATIONS,
  CreateApiKeyBody,
  CreateProgramBody,
  InviteMemberBody,
  ListQuery,
  NoQuery,
  UpdateProgramBody,
} from '@affiliate/contracts';
import {
  createRouter,
  constantTimeEquals,
  parseBody,
  parseQuery,
  REQUEST_ID_HEADER,
  setNextPageLink,
  unauthorized,
  type Logger,
} from '@affiliate/platform';
import express, { type Router, type Request, type RequestHandler, type Response } from 'express';
import type { RateLimit } from '../config';
import { checkAffiliateCoupons } from '../portal/affiliate-portal';
import type { ServiceCalls } from '../portal/service-calls';
import { FailedAuthentication } from '../rate-limit/middleware';
import type { RateLimits } from '../rate-limit/rate-limiter';
import type { TeamAccounts } from '../team/team-accounts';
import { inviteUrlOf } from '../team/team-routes';
import { createApiKey, listApiKeys, revokeApiKey, type AdminStore } from './api-keys';
import { listAuditRecords, recordAudit, recordRefusal } from './audit-log';
import { createPublishableKey, listPublishableKeys, revokePublishableKey } from './publishable-keys';
import { createProgram, deleteProgram, getProgram, listPrograms, updateProgram } from './programs';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
const ADMIN_PREFIX = '/admin/v1';

// The admin operations' templates, so that audit entries name what was done, never a raw path.
const ADMIN_TEMPLATES = API_OPERATIONS.filter((operation) => operation.admin).map((operation) => ({
  method: operation.method.toUpperCase(),
  template: `${ADMIN_PREFIX}${operation.path}`,
  pattern: new RegExp(`^${ADMIN_PREFIX}${operation.path.replace(/\{id\}/g, '([^/]+)')}/?$`),
}));

/** Read from originalUrl: by the time a response finishes, express may have unwound the router's path. */
function operationOf(request: Request): { action: string; targetId: string | null } {
  const path = request.originalUrl.split('?')[0] ?? '';
  for (const { method, template, pattern } of ADMIN_TEMPLATES) {
    const match = request.method === method ? pattern.exec(path) : null;
    if (match) return { action: `${method} ${template}`, targetId: match[1] ?? null };
  }
  return { action: `${request.method} ${ADMIN_PREFIX}/unmatched`, targetId: null };
}

/**
 * Every change made with the admin token, and every refused attempt, is appended to the audit
 * record once answered: who (credential, address, user agent), what (operation and target), when,
 * and the outcome. Reads with the token are not recorded. Refusals are counted, one record per
 * address and window, so a flood without the token cannot grow the record.
 */
function auditTrail(store: AdminStore, logger: Logger, refusalWindowMs: number): RequestHandler {
  return (request, response, next) => {
    response.on('finish', () => {
      const credential = response.locals.adminCredential as 'admin-token' | 'refused' | undefined;
      if (!credential || (credential === 'admin-token' && request.method === 'GET')) return;
      const { action, targetId } = operationOf(request);
      const entry = {
        actor: { credential, address: request.ip ?? null, userAgent: request.header('user-agent')?.slice(0, 300) ?? null, user: null },
        action,
        targetId: targetId ?? (response.locals.createdId as string | undefined) ?? null,
        status: response.statusCode,
        requestId: String(response.locals.requestId ?? request.header(REQUEST_ID_HEADER) ?? '') || null,
      };
      (credential === 'refused' ? recordRefusal(store, entry, refusalWindowMs) : recordAudit(store, entry)).catch((error: unknown) =>
        logger.error({ err: error, action }, 'could not write the admin audit record'),
      );
    });
    next();
  };
}

/**
 * The admin token, compared in constant time, is always accepted: a lockout that refused it too
 * would let anyone sharing an address (everyone, behind a proxy that is not trusted) shut the
 * operators out. Anything else is limited per address, then answered 401, and past the failure
 * limit 429 with a Retry-After that doubles with each further attempt.
 */
function requireAdmin(adminToken: string, failures: FailedAuthentication, addressLimit: RequestHandler): RequestHandler {
  return async (request, response: Response, next) => {
    const presented = BEARER.exec(request.header('authorization') ?? '')?.[1];
    if (presented && constantTimeEquals(presented, adminToken)) {
      response.locals.adminCredential = 'admin-token';
      return next();
    }
    response.locals.adminCredential = 'refused';
    await addressLimit(request, response, () => undefined);
    response.setHeader('WWW-Authenticate', presented ? 'Bearer realm="admin", error="invalid_token"' : 'Bearer realm="admin"');
    throw await failures.record(
      request.ip,
      response,
      unauthorized('Missing or invalid admin token: send "Authorization: Bearer <ADMIN_TOKEN>"'),
    );
  };
}

export type AdminRoutesOptions = {
  store: AdminStore;
  adminToken: string;
  rateLimits: RateLimits;
  /** Wrong tokens allowed per client address in a window. */
  failedAuthLimit: RateLimit;
  /** The per-address limit of requests without a credential, which requests without the right token count in. */
  addressLimit: RequestHandler;
  logger: Logger;
  bodyLimit: string;
  /** Publish the program event now and drop cached key verdicts on this replica. */
  onChange: () => void;
  /** The coupon service, which says whether the coupons offered to affiliates are the program's. */
  services: Pick<ServiceCalls, 'coupon'>;
  /** The programs' teams: the operator invites a program's first OWNER. */
  team: TeamAccounts;
};

/** DESIGN.md §6: operators manage programs and API keys; keys are shown once, on creation. */
export function adminRoutes(options: AdminRoutesOptions): Router {
  const { store } = options;
  const router = createRouter();
  router.use(auditTrail(store, options.logger, options.failedAuthLimit.duration * 1000));
  router.use(
    requireAdmin(
      options.adminToken,
      new FailedAuthentication(options.rateLimits, options.failedAuthLimit, 'admin', true),
      options.addressLimit,
    ),
  );
  router.use(express.json({ limit: options.bodyLimit }));
  const changed = <T>(result: T): T => {
    options.onChange();
    return result;
  };

  router.post('/programs', async (request, response) => {
    const body = parseBody(CreateProgramBody, request);
    await checkAffiliateCoupons(options.services, null, body.affiliateCouponIds);
    const program = await createProgram(store.programs, body);
    response.locals.createdId = program.id;
    response.json(changed(program));
  });
  router.get('/programs', async (request, response) => {
    const page = parseQuery(ListQuery, request);
    const { items, nextCursor } = await listPrograms(store.programs, page);
    setNextPageLink(request, response, nextCursor, page.limit);
    response.json(items);
  });
  router.get('/programs/:id', async (request, response) => {
    parseQuery(NoQuery, request);
    response.json(await getProgram(store.programs, request.params.id));
  });
  router.put('/programs/:id', async (request, response) => {
    const body = parseBody(UpdateProgramBody, request);
    if (body.affiliateCouponIds?.length) {
      // The program first (a 404 for one that does not exist), then its coupons.
      await getProgram(store.programs, request.params.id);
      await checkAffiliateCoupons(options.services, request.params.id, body.affiliateCouponIds);
    }
    response.json(changed(await updateProgram(store.programs, request.params.id, body)));
  });
  router.delete('/programs/:id', async (request, response) => {
    const deleted = await deleteProgram(store.programs, request.params.id);
    // Its team goes with it: sessions end, open invites stop working, and the members' addresses are free to join another program.
    await options.team.releaseProgram(request.params.id);
    response.json(changed(deleted));
  });
  router.post('/programs/:id/api-keys', async (request, response) => {
    const { scopes } = parseBody(CreateApiKeyBody, request);
    response.setHeader('Cache-Control', 'no-store');
    response.json(await createApiKey(store, request.params.id, { scopes }));
  });
  router.get('/programs/:id/api-keys', async (request, response) => {
    parseQuery(NoQuery, request);
    await getProgram(store.programs, request.params.id);
    response.json(await listApiKeys(store, request.params.id));
  });
  router.delete('/api-keys/:id', async (request, response) => {
    response.json(changed(await revokeApiKey(store, request.params.id)));
  });
  router.post('/programs/:id/publishable-keys', async (request, response) => {
    const created = await createPublishableKey(store, request.params.id);
    response.locals.createdId = created.id;
    response.json(created);
  });
  router.get('/programs/:id/publishable-keys', async (request, response) => {
    parseQuery(NoQuery, request);
    await getProgram(store.programs, request.params.id);
    response.json(await listPublishableKeys(store, request.params.id));
  });
  router.delete('/publishable-keys/:id', async (request, response) => {
    response.json(changed(await revokePublishableKey(store, request.params.id)));
  });
  // The operator makes a program's first OWNER (and may invite anyone else): the answer's link is the one credential, shown once.
  router.post('/programs/:id/members', async (request, response) => {
    const body = parseBody(InviteMemberBody, request);
    await getProgram(store.programs, request.params.id);
    const { invite, token } = await options.team.invite(request.params.id, body, { operator: true });
    response.setHeader('Cache-Control', 'no-store');
    response.json({ invite, inviteUrl: inviteUrlOf(`${request.protocol}://${request.get('host')}`, token) });
  });
  router.get('/programs/:id/members', async (request, response) => {
    parseQuery(NoQuery, request);
    await getProgram(store.programs, request.params.id);
    response.json(await options.team.list(request.params.id));
  });
  router.get('/audit-records', async (request, response) => {
    const page = parseQuery(ListQuery, request);
    const { items, nextCursor } = await listAuditRecords(store.auditRecords, page);
    setNextPageLink(request, response, nextCursor, page.limit);
    response.json(items);
  });
  return router;
}
