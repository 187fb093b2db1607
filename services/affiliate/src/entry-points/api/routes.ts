import {
  AffiliateQuery,
  CreateAffiliateBody,
  CreateLinkBody,
  CSV_COLUMNS,
  DeleteAffiliateBody,
  DeleteLinkBody,
  LINK_MESSAGES,
  LinkQuery,
  RecordClickBody,
  RenameLinkBody,
  SignupAffiliateBody,
  UpdateAffiliateBody,
} from '@affiliate/contracts';
import {
  createRouter,
  HeavyOperations,
  listWantsCsv,
  parseBody,
  parseQuery,
  periodOf,
  programIdOf,
  refuseListParametersBeside,
  setNextPageLink,
  streamCsv,
  type ServiceContext,
} from '@affiliate/platform';
import { type Router, type Request } from 'express';
import type { ZodTypeAny, z } from 'zod';
import type { Repositories } from '../../data-access/repositories';
import { createAffiliate, signUpAffiliate } from '../../domain/create-affiliate';
import { deleteAffiliate, updateAffiliate } from '../../domain/change-affiliate';
import { addLink, deleteLink, renameLink, type RenamePolicy } from '../../domain/change-links';
import { affiliateCsvRows, listAffiliates, lookUpAffiliate } from '../../domain/find-affiliates';
import { listLinks, lookUpLinks } from '../../domain/find-links';
import { clickIntake, recordClick } from '../../domain/record-click';

const EXACT_LINK_MESSAGES: readonly string[] = Object.values(LINK_MESSAGES);

/** Slug errors are answered first, with the spec's exact sentence, not prefixed with the field name. */
const parseSlugBody = <Schema extends ZodTypeAny>(schema: Schema, request: Request): z.infer<Schema> =>
  parseBody(schema, request, { exactMessages: EXACT_LINK_MESSAGES });

export function affiliateRoutes(context: ServiceContext, repositories: Repositories, renamePolicy: RenamePolicy): Router {
  const router = createRouter();
  const clicks = clickIntake(repositories);
  // A CSV export reads the whole program: a few per program at once (429 beyond), as the sale service's exports.
  const exports = new HeavyOperations();

  router.post('/affiliates', async (request, response) => {
    const body = parseSlugBody(CreateAffiliateBody, request);
    const affiliate = await createAffiliate(repositories, programIdOf(response), body);
    response.json(affiliate);
  });

  // Internal: only the gateway's /join/{slug} reaches it (no public route leads here).
  router.post('/signups', async (request, response) => {
    const affiliate = await signUpAffiliate(repositories, programIdOf(response), parseBody(SignupAffiliateBody, request));
    response.status(201).json(affiliate);
  });

  router.get('/affiliates', async (request, response) => {
    const query = parseQuery(AffiliateQuery, request);
    const programId = programIdOf(response);
    if (query.id !== undefined || query.email !== undefined) {
      refuseListParametersBeside(query, ['id', 'email']);
      response.json(await lookUpAffiliate(repositories, programId, query));
      return;
    }
    const csv = listWantsCsv(request, query.format);
    const filters = { status: query.status, createdAt: periodOf(query, 'createdAt') };
    if (csv) {
      await exports.run(programId, () =>
        streamCsv(response, 'affiliates.csv', CSV_COLUMNS.affiliates, affiliateCsvRows(repositories, programId, filters)),
      );
      return;
    }
    const { items, nextCursor } = await listAffiliates(repositories, programId, filters, query);
    setNextPageLink(request, response, nextCursor, query.limit);
    response.json(items);
  });

  router.put('/affiliates', async (request, response) => {
    const body = parseSlugBody(UpdateAffiliateBody, request);
    const affiliate = await updateAffiliate(repositories, programIdOf(response), body);
    response.json(affiliate);
  });

  router.delete('/affiliates', async (request, response) => {
    const body = parseBody(DeleteAffiliateBody, request);
    const deleted = await deleteAffiliate(repositories, programIdOf(response), body.affiliateId);
    response.json(deleted);
  });

  router.post('/links', async (request, response) => {
    const body = parseSlugBody(CreateLinkBody, request);
    const link = await addLink(repositories, programIdOf(response), body);
    response.json(link);
  });

  router.get('/links', async (request, response) => {
    const query = parseQuery(LinkQuery, request);
    const programId = programIdOf(response);
    const { limit, startingAfter, id, link, affiliateId, affiliateEmail } = query;
    const lookup = { id, link, affiliateId, affiliateEmail };
    const createdAt = periodOf(query, 'createdAt');
    // affiliateId alone is the specification's lookup: every link of the affiliate, oldest first. With
    // a period or a page it is a filter of the list instead (newest first, paged, as every list).
    const listed = createdAt !== undefined || limit !== undefined || startingAfter !== undefined;
    if (id !== undefined || link !== undefined || affiliateEmail !== undefined || (affiliateId !== undefined && !listed)) {
      refuseListParametersBeside(query, ['id', 'link', 'affiliateId', 'affiliateEmail']);
      response.json(await lookUpLinks(repositories, programId, lookup));
      return;
    }
    const { items, nextCursor } = await listLinks(repositories, programId, { affiliateId, createdAt }, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(items);
  });

  router.put('/links', async (request, response) => {
    const body = parseSlugBody(RenameLinkBody, request);
    const link = await renameLink(repositories, programIdOf(response), body, renamePolicy);
    response.json(link);
  });

  router.delete('/links', async (request, response) => {
    const body = parseBody(DeleteLinkBody, request);
    const deleted = await deleteLink(repositories, programIdOf(response), body);
    response.json(deleted);
  });

  router.post('/clicks', async (request, response) => {
    const body = parseBody(RecordClickBody, request);
    response.json(await recordClick(repositories, clicks, programIdOf(response), body));
  });

  return router;
}
