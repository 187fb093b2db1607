import {
  CreatePortalSessionBody,
  ListQuery,
  NoQuery,
  ProgramSettingsBody,
  RevokePortalSessionsBody,
  RevokePublishableKeyBody,
} from '@affiliate/contracts';
import { createRouter, parseBody, parseQuery, requireJsonBody, setNextPageLink } from '@affiliate/platform';
import express, { type Router, type RequestHandler } from 'express';
import type { ProgramAuditLog } from '../admin/program-audit-log';
import type { ProgramRepository } from '../admin/program-model';
import { getProgram, updateProgram } from '../admin/programs';
import { createPublishableKey, listPublishableKeys, revokePublishableKey, type PublishableKeyModel } from '../admin/publishable-keys';
import { auditActorOf, callerOf } from '../auth/authenticate';
import type { IdempotencyRecordModel } from '../idempotency/idempotency-record';
import { idempotency, keepRawBody, storeLocalAnswer, withheldOnReplay } from '../idempotency/middleware';
import { checkAffiliateCoupons, createPortalSession } from '../portal/affiliate-portal';
import type { PortalSessions } from '../portal/portal-sessions';
import type { ServiceCalls } from '../portal/service-calls';

export type ProgramApiOptions = {
  programs: ProgramRepository;
  publishableKeys: PublishableKeyModel;
  programAudit: ProgramAuditLog;
  /** The per-key rate limit, applied as on every proxied route. */
  rateLimit: RequestHandler;
  bodyLimit: string;
  /** Where an Idempotency-Key's answer is kept: the writes here honour it as the proxied ones do. */
  idempotencyRecords: IdempotencyRecordModel;
  /** How long a claimed key may stay in progress before another request may take it over. */
  idempotencyAbandonedAfterMs: number;
  /** Publish the program event now and drop cached key verdicts on this replica. */
  onChange: () => void;
  /** Affiliate portal sessions, and the services their checks ask (the affiliate's status, the coupons offered). */
  portalSessions: PortalSessions;
  services: Pick<ServiceCalls, 'affiliate' | 'coupon'>;
};

/**
 * What the gateway answers itself under /api/v1, for the program of the key: its own settings
 * (everything but the rate limit, API access and endpoint cap, which stay the operator's), its
 * publishable keys and its audit record. The program always comes from the key: no route here takes a program id.
 */
export function programApiRoutes(options: ProgramApiOptions): Router {
  const router = createRouter();
  const store = { programs: options.programs, publishableKeys: options.publishableKeys };
  const parseJson = express.json({ limit: options.bodyLimit, verify: keepRawBody as never });
  const json: RequestHandler = (request, response, next) =>
    requireJsonBody(request, response, (error?: unknown) => (error ? next(error) : parseJson(request, response, next)));
  // A route without a body still reads what was sent: a retry is the same request only with the same bytes.
  const bytes = express.raw({ type: () => true, limit: options.bodyLimit });
  // A write with an Idempotency-Key is answered once, like the proxied writes (after the body is parsed, which it is fingerprinted by).
  const once: RequestHandler[] = [idempotency(options.idempotencyRecords, options.idempotencyAbandonedAfterMs), storeLocalAnswer];
  const programIdOf = (response: express.Response) => callerOf(response).programId;

  router.get('/program', options.rateLimit, async (request, response) => {
    parseQuery(NoQuery, request);
    response.json(await getProgram(options.programs, programIdOf(response)));
  });
  router.put('/program', options.rateLimit, json, ...once, async (request, response) => {
    const settings = parseBody(ProgramSettingsBody, request);
    await checkAffiliateCoupons(options.services, programIdOf(response), settings.affiliateCouponIds);
    const program = await updateProgram(options.programs, programIdOf(response), settings);
    options.onChange();
    response.json(program);
  });
  router.get('/publishable-keys', options.rateLimit, async (request, response) => {
    parseQuery(NoQuery, request);
    response.json(await listPublishableKeys(store, programIdOf(response)));
  });
  router.post('/publishable-keys', options.rateLimit, bytes, ...once, async (_request, response) => {
    response.json(await createPublishableKey(store, programIdOf(response)));
  });
  router.delete('/publishable-keys', options.rateLimit, json, ...once, async (request, response) => {
    const { publishableKeyId } = parseBody(RevokePublishableKeyBody, request);
    const revoked = await revokePublishableKey(store, publishableKeyId, programIdOf(response));
    options.onChange();
    response.json(revoked);
  });
  // The program's site (or the console's "view as affiliate") sends one affiliate into its portal.
  // The link's token is a credential: a replay answers without `url`, which is never stored (only a hash of the token is kept).
  router.post('/affiliate-portal-sessions', options.rateLimit, json, withheldOnReplay('url'), ...once, async (request, response) => {
    const body = parseBody(CreatePortalSessionBody, request);
    const portal = { sessions: options.portalSessions, services: options.services };
    // The link points at the gateway that made it, as the client reached it (trust proxy decides which forwarding headers count).
    const createdBy = auditActorOf(callerOf(response));
    response.json(
      await createPortalSession(portal, programIdOf(response), body, `${request.protocol}://${request.get('host')}`, createdBy),
    );
  });
  router.delete('/affiliate-portal-sessions', options.rateLimit, json, ...once, async (request, response) => {
    const body = parseBody(RevokePortalSessionsBody, request);
    const programId = programIdOf(response);
    const revoked = body.affiliatePortalSessionId
      ? await options.portalSessions.revoke(programId, body.affiliatePortalSessionId)
      : await options.portalSessions.revokeAllOf(programId, body.affiliateId as string);
    response.json({ revoked });
  });
  router.get('/audit-records', options.rateLimit, async (request, response) => {
    const page = parseQuery(ListQuery, request);
    const { items, nextCursor } = await options.programAudit.list(programIdOf(response), page);
    setNextPageLink(request, response, nextCursor, page.limit);
    response.json(items);
  });
  return router;
}
