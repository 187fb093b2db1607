import {
  CreateReferralBody,
  CSV_COLUMNS,
  CustomerClaimQuery,
  DeleteReferralBody,
  InternalSummaryQuery,
  ReferralQuery,
  UpdateReferralBody,
} from '@affiliate/contracts';
import {
  createRouter,
  customerKeysOf,
  HeavyOperations,
  listWantsCsv,
  parseBody,
  parseQuery,
  periodOf,
  programIdOf,
  refuseListParametersBeside,
  setNextPageLink,
  streamCsv,
  type ServiceClient,
  type ServiceContext,
} from '@affiliate/platform';
import { type Router } from 'express';
import type { ReferralRepositories } from '../../data-access/repositories';
import { createReferral } from '../../domain/create-referral';
import { deleteReferral } from '../../domain/delete-referral';
import { listReferrals, referralById, referralCsvRows } from '../../domain/find-referrals';
import { referralSummary } from '../../domain/referral-summary';
import { updateReferral } from '../../domain/update-referral';

export function referralRoutes(context: ServiceContext, repositories: ReferralRepositories, affiliates: ServiceClient): Router {
  const router = createRouter();
  // A CSV export reads the whole program: a few per program at once (429 beyond), as the sale service's exports.
  const exports = new HeavyOperations();

  router.post('/referrals', async (request, response) => {
    const body = parseBody(CreateReferralBody, request);
    const referral = await createReferral(repositories, affiliates, programIdOf(response), body);
    response.json(referral);
  });

  router.get('/referrals', async (request, response) => {
    const query = parseQuery(ReferralQuery, request);
    const { id, limit, startingAfter, format } = query;
    const programId = programIdOf(response);
    if (id !== undefined) {
      refuseListParametersBeside(query, ['id']);
      response.json(await referralById(repositories, programId, id));
      return;
    }
    const csv = listWantsCsv(request, format);
    const { email, affiliateId, referredUserExternalId, status } = query;
    const filters = { email, affiliateId, referredUserExternalId, status, createdAt: periodOf(query, 'createdAt') };
    if (csv) {
      await exports.run(programId, () =>
        streamCsv(response, 'referrals.csv', CSV_COLUMNS.referrals, referralCsvRows(repositories, programId, filters)),
      );
      return;
    }
    const { items, nextCursor } = await listReferrals(repositories, programId, filters, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(items);
  });

  // The spec gives PUT /referrals its own error shape: { error: <status>, message }.
  router.put('/referrals', async (request, response) => {
    const body = parseBody(UpdateReferralBody, request);
    const referral = await updateReferral(repositories, programIdOf(response), body);
    response.json({ message: 'Referral updated successfully', referral });
  });

  router.delete('/referrals', async (request, response) => {
    const { referralId } = parseBody(DeleteReferralBody, request);
    const deleted = await deleteReferral(repositories, programIdOf(response), referralId);
    response.json(deleted);
  });

  // Internal: the referrals' part of GET /reports/summary (the sale service's), counted by the database.
  router.get('/internal/referral-summary', async (request, response) => {
    const { from, to } = parseQuery(InternalSummaryQuery, request);
    response.json(await referralSummary(repositories, programIdOf(response), new Date(from), new Date(to)));
  });

  // Internal (contracts: CustomerClaimQuery): whether another affiliate referred this customer first, for a sale's risk signals.
  router.get('/internal/customer-claims', async (request, response) => {
    const { affiliateId, email, customerId } = parseQuery(CustomerClaimQuery, request);
    response.json({
      claim: await repositories.customerClaims.claimedByAnother(programIdOf(response), affiliateId, customerKeysOf({ email, customerId })),
    });
  });

  return router;
}
