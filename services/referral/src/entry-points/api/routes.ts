import { CreateReferralBody, DeleteReferralBody, ReferralQuery, UpdateReferralBody } from '@affiliate/contracts';
import { parseBody, parseQuery, programIdOf, setNextPageLink, type ServiceClient, type ServiceContext } from '@affiliate/platform';
import { Router } from 'express';
import type { ReferralModels } from '../../data-access/models';
import { createReferral } from '../../domain/create-referral';
import { deleteReferral } from '../../domain/delete-referral';
import { listReferrals, referralById } from '../../domain/find-referrals';
import { updateReferral } from '../../domain/update-referral';

export function referralRoutes(context: ServiceContext, models: ReferralModels, affiliates: ServiceClient): Router {
  const router = Router();

  router.post('/referrals', async (request, response) => {
    const body = parseBody(CreateReferralBody, request);
    const referral = await createReferral(models, affiliates, programIdOf(response), body);
    response.json(referral);
  });

  router.get('/referrals', async (request, response) => {
    const { id, limit, startingAfter, ...filters } = parseQuery(ReferralQuery, request);
    const programId = programIdOf(response);
    if (id !== undefined) {
      response.json(await referralById(models, programId, id));
      return;
    }
    const { items, nextCursor } = await listReferrals(models, programId, filters, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(items);
  });

  // The spec gives PUT /referrals its own error shape: { error: <status>, message }.
  router.put('/referrals', async (request, response) => {
    const body = parseBody(UpdateReferralBody, request);
    const referral = await updateReferral(models, programIdOf(response), body);
    response.json({ message: 'Referral updated successfully', referral });
  });

  router.delete('/referrals', async (request, response) => {
    const { referralId } = parseBody(DeleteReferralBody, request);
    const deleted = await deleteReferral(models, programIdOf(response), referralId);
    response.json(deleted);
  });

  return router;
}
