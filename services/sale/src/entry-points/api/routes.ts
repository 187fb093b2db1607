import {
  AffiliateBalancesQuery,
  CommissionQuery,
  CreatePayoutsBody,
  CreateSaleBody,
  CSV_COLUMNS,
  DeleteSaleBody,
  PayoutExportQuery,
  PayoutQuery,
  ReleaseCommissionBody,
  ReportQuery,
  SaleQuery,
  StatementQuery,
  SummaryQuery,
  UpdatePayoutBody,
  UpdateSaleBody,
  VoidCommissionBody,
} from '@affiliate/contracts';
import {
  apiKeyOf,
  createRouter,
  listWantsCsv,
  parseBody,
  parseQuery,
  periodOf,
  programIdOf,
  refuseListParametersBeside,
  setNextPageLink,
  streamCsv,
  wantsCsv,
  type ServiceContext,
} from '@affiliate/platform';
import { type Router, type RequestHandler } from 'express';
import { toPayout } from '../../data-access/payouts';
import { listSales, saleById, saleCsvRows } from '../../domain/find-sales';
import { createPayouts, listPayouts, payoutById, updatePayout } from '../../domain/payouts';
import { recordPayment } from '../../domain/record-sale';
import { affiliateReport } from '../../domain/reports';
import { reverseSale } from '../../domain/reverse-sale';
import { programSummary } from '../../domain/summary';
import type { SaleDependencies } from '../../domain/sale-dependencies';
import { updateSale } from '../../domain/update-sale';
import { commissionCsvRows, listCommissions, releaseCommission, voidReviewedCommission } from '../../domain/review-commissions';
import { affiliateBalances, affiliateStatement } from '../../domain/statements';
import { sendPayoutsCsv, sendReportCsv, sendStatementCsv } from './csv';

export function saleRoutes(context: ServiceContext, deps: SaleDependencies): Router {
  const router = createRouter();
  // Reads over a whole period or a whole payout: a few per program at once (429 beyond).
  const heavy = deps.heavyOperations.middleware();
  const heavyWhenCsv: RequestHandler = (request, response, next) => (wantsCsv(request) ? heavy(request, response, next) : next());
  // A list's CSV export (format=csv or Accept: text/csv) reads every matching row: a heavy operation.
  const heavyWhenListCsv: RequestHandler = (request, response, next) =>
    listWantsCsv(request, request.query.format) ? heavy(request, response, next) : next();

  router.post('/sales', async (request, response) => {
    const body = parseBody(CreateSaleBody, request);
    const { sale, replayed } = await recordPayment(deps, programIdOf(response), body, { refuseOtherContent: true });
    // A retry with the externalId of a recorded payment is answered as an Idempotency-Key replay is.
    if (replayed) response.setHeader('Idempotent-Replayed', 'true');
    response.json(sale);
  });

  router.get('/sales', heavyWhenListCsv, async (request, response) => {
    const query = parseQuery(SaleQuery, request);
    const { id, limit, startingAfter } = query;
    const programId = programIdOf(response);
    if (id !== undefined) {
      refuseListParametersBeside(query, ['id']);
      response.json(await saleById(deps.repositories, programId, id));
      return;
    }
    const csv = listWantsCsv(request, query.format);
    const { affiliateId, referralId, currency } = query;
    const filters = { affiliateId, referralId, currency, createdAt: periodOf(query, 'createdAt'), paidAt: periodOf(query, 'paidAt') };
    if (csv) {
      await streamCsv(response, 'sales.csv', CSV_COLUMNS.sales, saleCsvRows(deps.repositories, programId, filters));
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

  router.post('/payouts', async (request, response) => {
    const body = parseBody(CreatePayoutsBody, request);
    response.json(await createPayouts(deps, programIdOf(response), body));
  });

  router.get('/payouts', heavyWhenCsv, async (request, response) => {
    const query = parseQuery(PayoutQuery, request);
    const { id, limit, startingAfter, affiliateId, status, currency } = query;
    const filters = { affiliateId, status, currency, createdAt: periodOf(query, 'createdAt'), paidAt: periodOf(query, 'paidAt') };
    const programId = programIdOf(response);
    if (id !== undefined) {
      refuseListParametersBeside(query, ['id']);
      const payout = await payoutById(deps, programId, id);
      if (wantsCsv(request)) sendPayoutsCsv(response, `payout-${payout._id}.csv`, [payout]);
      else response.json(toPayout(payout));
      return;
    }
    const { items, nextCursor } = await listPayouts(deps, programId, filters, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    if (wantsCsv(request)) sendPayoutsCsv(response, 'payouts.csv', items);
    else response.json(items.map(toPayout));
  });

  router.get('/payouts/export', heavy, async (request, response) => {
    const { payoutId } = parseQuery(PayoutExportQuery, request);
    const payout = await payoutById(deps, programIdOf(response), payoutId);
    sendPayoutsCsv(response, `payout-${payout._id}.csv`, [payout]);
  });

  router.put('/payouts', async (request, response) => {
    const body = parseBody(UpdatePayoutBody, request);
    response.json(await updatePayout(deps, programIdOf(response), body));
  });

  router.get('/reports/affiliates', heavy, async (request, response) => {
    const period = parseQuery(ReportQuery, request);
    const rows = await affiliateReport(deps, programIdOf(response), period);
    if (wantsCsv(request)) sendReportCsv(response, rows);
    else response.json(rows);
  });

  // The console's overview: summed by the databases, but over a whole program and period, so a heavy operation (429 beyond the program's few).
  router.get('/reports/summary', heavy, async (request, response) => {
    const query = parseQuery(SummaryQuery, request);
    response.json(await programSummary(deps, programIdOf(response), query));
  });

  router.get('/commissions', heavyWhenListCsv, async (request, response) => {
    const query = parseQuery(CommissionQuery, request);
    const { limit, startingAfter, status, affiliateId, currency } = query;
    const filters = { status, affiliateId, currency, createdAt: periodOf(query, 'createdAt'), paidAt: periodOf(query, 'paidAt') };
    if (listWantsCsv(request, query.format)) {
      await streamCsv(
        response,
        'commissions.csv',
        CSV_COLUMNS.commissions,
        commissionCsvRows(deps.repositories, programIdOf(response), filters),
      );
      return;
    }
    const { items, nextCursor } = await listCommissions(deps.repositories, programIdOf(response), filters, { limit, startingAfter });
    setNextPageLink(request, response, nextCursor, limit);
    response.json(items);
  });

  router.post('/commissions/release', async (request, response) => {
    const body = parseBody(ReleaseCommissionBody, request);
    response.json(await releaseCommission(deps.repositories, programIdOf(response), body, apiKeyOf(request)));
  });

  router.post('/commissions/void', async (request, response) => {
    const body = parseBody(VoidCommissionBody, request);
    response.json(await voidReviewedCommission(deps.repositories, programIdOf(response), body, apiKeyOf(request)));
  });

  // The affiliate portal's statement: summed in the database, so not a heavy operation (a portal load never takes the program's reports' turn).
  router.get('/internal/affiliate-balances', async (request, response) => {
    const { affiliateId } = parseQuery(AffiliateBalancesQuery, request);
    response.json(await affiliateBalances(deps, programIdOf(response), affiliateId));
  });

  // A statement reads the affiliate's whole history: a heavy operation.
  router.get('/affiliates/statement', heavy, async (request, response) => {
    const { format, ...query } = parseQuery(StatementQuery, request);
    const statement = await affiliateStatement(deps, programIdOf(response), query);
    if (format === 'csv' || (format === undefined && wantsCsv(request))) sendStatementCsv(response, statement);
    else response.json(statement);
  });

  return router;
}
