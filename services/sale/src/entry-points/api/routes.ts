import { CreateSaleBody, DeleteSaleBody, SaleQuery, UpdateSaleBody } from '@affiliate/contracts';
import { parseBody, parseQuery, programIdOf, setNextPageLink, type ServiceContext } from '@affiliate/platform';
import { Router } from 'express';
import { listSales, saleById } from '../../domain/find-sales';
import { recordSale } from '../../domain/record-sale';
import { reverseSale } from '../../domain/reverse-sale';
import type { SaleDependencies } from '../../domain/sale-dependencies';
import { updateSale } from '../../domain/update-sale';

export function saleRoutes(context: ServiceContext, deps: SaleDependencies): Router {
  const router = Router();

  router.post('/sales', async (request, response) => {
    const body = parseBody(CreateSaleBody, request);
    const sale = await recordSale(deps, programIdOf(response), body);
    response.json(sale);
  });

  router.get('/sales', async (request, response) => {
    const { id, limit, startingAfter, ...filters } = parseQuery(SaleQuery, request);
    const programId = programIdOf(response);
    if (id !== undefined) {
      response.json(await saleById(deps.repositories, programId, id));
      return;
    }
    const { items, nextCursor } = await listSales(deps.repositories, programId, filters, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(items);
  });

  router.put('/sales', async (request, response) => {
    const body = parseBody(UpdateSaleBody, request);
    const sale = await updateSale(deps.repositories, programIdOf(response), body);
    response.json(sale);
  });

  router.delete('/sales', async (request, response) => {
    const { saleId } = parseBody(DeleteSaleBody, request);
    const reversed = await reverseSale(deps.repositories, programIdOf(response), saleId);
    response.json(reversed);
  });

  return router;
}
