import { DailyActivityQuery, InternalSummaryQuery, QueryInteger, ReportQuery, VisitorId } from '@affiliate/contracts';
import { createRouter, parseQuery, programIdOf } from '@affiliate/platform';
import { type Router } from 'express';
import { z } from 'zod';
import type { Repositories } from '../../data-access/repositories';
import { affiliateSummary } from '../../domain/affiliate-summary';
import { affiliateActivity, dailyActivityOf, resolveAffiliate, resolveAttribution } from '../../domain/resolve-attribution';

const Identifier = z.string().min(1).max(254);

const InternalAffiliateQuery = z
  // risk=true: with the program's risk settings (what the sale service's risk signals need).
  // recent=true: the sale service recording a sale; the answer may be this process's read of up to
  // RECENT_READS_MS ago (resolve-attribution.ts). Without it, the database's answer.
  .object({
    id: Identifier.optional(),
    email: Identifier.optional(),
    risk: z.enum(['true']).optional(),
    recent: z.enum(['true']).optional(),
  })
  .strict()
  .refine((query) => query.id !== undefined || query.email !== undefined, { path: ['id'], message: 'id or email is required' });

const AttributionQuery = z
  .object({
    clickId: QueryInteger.nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
    visitorId: VisitorId.optional(),
    link: Identifier.optional(),
    affiliateId: Identifier.optional(),
    affiliateEmail: Identifier.optional(),
  })
  .strict()
  .refine((query) => Object.values(query).some((value) => value !== undefined), {
    path: ['clickId'],
    message: 'one of clickId, visitorId, link, affiliateId or affiliateEmail is required',
  });

/** The read API of the other services (contracts: InternalAffiliate, Attribution); never proxied by the gateway. */
export function internalRoutes(repositories: Repositories): Router {
  const router = createRouter();

  router.get('/internal/affiliates', async (request, response) => {
    const query = parseQuery(InternalAffiliateQuery, request);
    response.json(await resolveAffiliate(repositories, programIdOf(response), query));
  });

  router.get('/internal/attribution', async (request, response) => {
    const query = parseQuery(AttributionQuery, request);
    response.json(await resolveAttribution(repositories, programIdOf(response), query));
  });

  router.get('/internal/affiliate-activity', async (request, response) => {
    const { from, to } = parseQuery(ReportQuery, request);
    response.json(
      await affiliateActivity(repositories, programIdOf(response), {
        from: from ? new Date(from) : undefined,
        to: to ? new Date(to) : undefined,
      }),
    );
  });

  // The affiliates' part of GET /reports/summary (the sale service's): counted by the database, so not a heavy operation of its own.
  router.get('/internal/affiliate-summary', async (request, response) => {
    const { from, to } = parseQuery(InternalSummaryQuery, request);
    response.json(await affiliateSummary(repositories, programIdOf(response), new Date(from), new Date(to)));
  });

  router.get('/internal/affiliate-daily-activity', async (request, response) => {
    const { affiliateId, days } = parseQuery(DailyActivityQuery, request);
    response.json(await dailyActivityOf(repositories, programIdOf(response), affiliateId, days));
  });

  return router;
}
