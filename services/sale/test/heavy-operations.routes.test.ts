import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM, type RunningService } from '@affiliate/platform';
import { eventually, newProgramId } from '@affiliate/platform/testing';
import { startSaleWorld, type SaleWorld } from './sale-world';

/**
 * The heavy-operation cap on the real sale routes (issue 27): while a program has
 * HEAVY_OPERATIONS_PER_PROGRAM (2) reports running, its next report, CSV export or payout run is
 * answered 429 with Retry-After, while another program's are served. The reports are held running
 * by holding their call to the affiliate service (a stand-in in front of the real one, released by
 * the test), so "at once" does not depend on timing.
 */
let world: SaleWorld;
let sale: RunningService;
let gate: Server;
const held: Array<{ request: IncomingMessage; response: ServerResponse }> = [];
let holding = true;

/** Passes a request on to the real affiliate service and its answer back. */
async function pass(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const answer = await fetch(`${world.affiliate.url}${request.url}`, {
    method: request.method,
    headers: request.headers as Record<string, string>,
  });
  response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
  response.end(Buffer.from(await answer.arrayBuffer()));
}

function release(): void {
  holding = false;
  for (const { request, response } of held.splice(0)) void pass(request, response);
}

beforeAll(async () => {
  world = await startSaleWorld();
  gate = createServer((request, response) => {
    // The reports' call for the affiliates' activity, and the summaries' for the affiliates' counts.
    if (holding && (request.url?.includes('activity') || request.url?.includes('affiliate-summary'))) held.push({ request, response });
    else void pass(request, response);
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  sale = await world.bootSaleVariant({ affiliateUrl: `http://127.0.0.1:${(gate.address() as AddressInfo).port}` });
}, 120_000);

afterAll(async () => {
  release();
  gate?.closeAllConnections();
  await new Promise<void>((resolve) => (gate ? gate.close(() => resolve()) : resolve()));
  await world?.stop();
});

const from = new Date(Date.now() - 86_400_000).toISOString();

test("beyond HEAVY_OPERATIONS_PER_PROGRAM running at once, a program's next report, CSV export or payout run is answered 429 with Retry-After, while another program's are served", async () => {
  const busy = world.api(sale, newProgramId());
  const other = world.api(sale, newProgramId());
  const reports = [busy.get('/reports/affiliates', { from }), busy.get('/reports/affiliates', { from }).set('accept', 'text/csv')].map(
    (pending) => pending.then((response) => response),
  );
  // Both reports hold a place: each is waiting on its call to the affiliate service.
  await eventually(() => expect(held).toHaveLength(DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM));

  const refused = [
    await busy.get('/reports/affiliates', { from }),
    await busy.get('/payouts/export', { payoutId: '00000000-0000-4000-8000-000000000001' }),
    await busy.get('/payouts').set('accept', 'text/csv'),
    await busy.post('/payouts', {}),
  ];
  for (const response of refused) {
    expect({ status: response.status, error: response.body.error }).toEqual({ status: 429, error: expect.stringMatching(/at most 2/) });
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  }
  // Not heavy: the same program's JSON list is served meanwhile.
  expect((await busy.get('/payouts')).status).toBe(200);

  // Another program's heavy operations are accepted.
  const accepted = [
    await other.get('/payouts').set('accept', 'text/csv'),
    await other.post('/payouts', {}),
    await other.get('/payouts/export', { payoutId: '00000000-0000-4000-8000-000000000001' }),
  ];
  expect(accepted.map((response) => response.status)).toEqual([200, 200, 404]);

  release();
  expect((await Promise.all(reports)).map((response) => response.status)).toEqual([200, 200]);
  // Their places given back, the program's next heavy operation runs.
  expect((await busy.get('/reports/affiliates', { from })).status).toBe(200);
  expect((await busy.post('/payouts', {})).status).toBe(200);
});

test("the program's summary (GET /reports/summary) is a heavy operation too: beyond HEAVY_OPERATIONS_PER_PROGRAM running at once, the next is answered 429 with Retry-After", async () => {
  holding = true;
  const busy = world.api(sale, newProgramId());
  const summaries = Array.from({ length: DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM }, () =>
    busy.get('/reports/summary').then((response) => response),
  );
  await eventually(() => expect(held).toHaveLength(DEFAULT_HEAVY_OPERATIONS_PER_PROGRAM));
  const refused = await busy.get('/reports/summary');
  expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 429, code: 'heavy_operations_limited' });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  release();
  expect((await Promise.all(summaries)).map((response) => response.status)).toEqual([200, 200]);
  expect((await busy.get('/reports/summary')).status).toBe(200);
});
