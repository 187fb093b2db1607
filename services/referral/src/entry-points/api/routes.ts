import { CreateReferralBody, CustomerClaimQuery, DeleteReferralBody, ReferralQuery, UpdateReferralBody } from '@affiliate/contracts';
import { createRouter, customerKeysOf, parseBody, parseQuery, programIdOf, setNextPageLink, type ServiceClient, type ServiceContext } from '@affiliate/platform';
import { type Router } from 'express';
import type { ReferralRepositories } from '../../data-access/repositories';
import { createReferral } from '../../domain/create-referral';
import { deleteReferral } from '../../domain/delete-referral';
import { listReferrals, referralById } from '../../domain/find-referrals';
import { updateReferral } from '../../domain/update-referral';

export function referralRoutes(context: ServiceContext, repositories: ReferralRepositories, affiliates: ServiceClient): Router {
  const router = createRouter();

  router.post('/referrals', async (request, response) => {
    const body = parseBody(CreateReferralBody, request);
    const referral = await createReferral(repositories, affiliates, programIdOf(response), body);
    response.json(referral);
  });

  router.get('/referrals', async (request, response) => {
    const { id, limit, startingAfter, ...filters } = parseQuery(ReferralQuery, request);
    const programId = programIdOf(response);
    if (id !== undefined) {
      response.json(await referralById(repositories, programId, id));
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

  // Internal (contracts: CustomerClaimQuery): whether another affiliate referred this customer first, for a sale's risk signals.
  router.get('/internal/customer-claims', async (request, response) => {
    const { affiliateId, email, customerId } = parseQuery(CustomerClaimQuery, request);
    response.json({ claim: await repositories.customerClaims.claimedByAnother(programIdOf(response), affiliateId, customerKeysOf({ email, customerId })) });
  });

  return router;
}
