import { CommissionPlanQuery, CreateCommissionPlanBody, DeleteCommissionPlanBody, UpdateCommissionPlanBody } from '@affiliate/contracts';
import { createRouter, parseBody, parseQuery, programIdOf, refuseListParametersBeside, setNextPageLink } from '@affiliate/platform';
import { type Router } from 'express';
import type { Repositories } from '../../data-access/repositories';
import {
  commissionPlanById,
  createCommissionPlan,
  deleteCommissionPlan,
  listCommissionPlans,
  updateCommissionPlan,
} from '../../domain/commission-plans';

export function commissionPlanRoutes(repositories: Repositories): Router {
  const router = createRouter();

  router.post('/commission-plans', async (request, response) => {
    const body = parseBody(CreateCommissionPlanBody, request);
    response.json(await createCommissionPlan(repositories, programIdOf(response), body));
  });

  router.get('/commission-plans', async (request, response) => {
    const query = parseQuery(CommissionPlanQuery, request);
    const { id, limit, startingAfter } = query;
    const programId = programIdOf(response);
    if (id !== undefined) {
      refuseListParametersBeside(query, ['id']);
      response.json(await commissionPlanById(repositories, programId, id));
      return;
    }
    const { items, nextCursor } = await listCommissionPlans(repositories, programId, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(items);
  });

  router.put('/commission-plans', async (request, response) => {
    const body = parseBody(UpdateCommissionPlanBody, request);
    response.json(await updateCommissionPlan(repositories, programIdOf(response), body));
  });

  router.delete('/commission-plans', async (request, response) => {
    const { commissionPlanId } = parseBody(DeleteCommissionPlanBody, request);
    response.json(await deleteCommissionPlan(repositories, programIdOf(response), commissionPlanId));
  });

  return router;
}
