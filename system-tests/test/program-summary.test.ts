import { randomUUID } from 'node:crypto';
import mongoose, { type Connection } from 'mongoose';
import { affiliateModel, type AffiliateDocument } from '../../services/affiliate/src/data-access/affiliates';
import { referralModel, type ReferralDocument } from '../../services/referral/src/data-access/referrals';
import { saleModel, type SaleDocument } from '../../services/sale/src/data-access/sales';
import { eventually } from '@affiliate/platform/testing';
import { okBody as ok, System, type Api } from '../harness';

/**
 * The program's summary (issue 32, GET /api/v1/reports/summary): counts and sums from the services'
 * own databases over the whole program, never a capped page (the console's overview used to stop at
 * 1,000 affiliates and 5,000 sales), money per currency and never added across currencies, the
 * period [from, to) exact at its edges, another program's data never counted, and bad dates refused.
 */
const DAY = 86_400_000;
const FROM = new Date('2025-03-01T00:00:00.000Z');
const TO = new Date('2025-03-08T00:00:00.000Z');
const DAYS = ['2025-03-01', '2025-03-02', '2025-03-03', '2025-03-04', '2025-03-05', '2025-03-06', '2025-03-07'];
const STATUSES = ['PENDING', 'ACTIVE', 'REJECTED', 'DISABLED'] as const;
/** Above the old overview's caps (1,000 affiliates, 1,000 referrals, 5,000 sales). */
const AFFILIATES = 1_200;
const AFFILIATES_IN_PERIOD = 800;
const REFERRALS = 1_100;
const REFERRALS_IN_PERIOD = 700;
const BULK_SALES = 5_000;

let system: System;
let programA: { programId: string; key: string; api: Api };
let programB: { programId: string; key: string; api: Api };
/** Program A's bulk sales per currency and day, as seeded: what the daily series must say. */
const bulkPerDay = new Map<string, number>();

beforeAll(async () => {
  system = await System.start();
  [programA, programB] = await Promise.all([system.createProgram(), system.createProgram()]);
  await seedProgramA();
  await seedProgramB();
}, 300_000);

afterAll(async () => {
  await system?.stop();
});

/**
 * The summary, asked again after a 503 as a client does: on a loaded 2-core machine, right after
 * thousands of documents were written, the local server's first scans may outlast a service's
 * upstream deadline. Anything else is the answer.
 */
const summaryOf = (api: Api, query = `?from=${FROM.toISOString()}&to=${TO.toISOString()}`) =>
  eventually(
    async () => {
      const answer = await api.get(`/reports/summary${query}`);
      if (answer.status === 503) throw new Error(`503: ${JSON.stringify(answer.body)}`);
      return answer;
    },
    120_000,
    1000,
  );

/** A test shortcut: documents written straight into a service's database through its own model (thousands through the API would take minutes). */
async function withDatabase<T>(service: string, work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await mongoose.createConnection(system.mongo.url, { dbName: `${system.dbPrefix}_${service}` }).asPromise();
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}

function affiliateDocument(programId: string, index: number, createdAt: Date): AffiliateDocument {
  const email = `seeded-${index}-${randomUUID().slice(0, 8)}@example.com`;
  return {
    _id: randomUUID(),
    programId,
    firstName: 'Seeded',
    lastName: `Affiliate ${index}`,
    email,
    emailKey: `${programId}:${email}`,
    status: STATUSES[index % STATUSES.length] as AffiliateDocument['status'],
    commissionRate: 10,
    createdAt,
    updatedAt: createdAt,
  };
}

function referralDocument(programId: string, createdAt: Date): ReferralDocument {
  const email = `customer-${randomUUID()}@example.com`;
  return {
    _id: randomUUID(),
    programId,
    affiliateId: randomUUID(),
    linkId: null,
    clickId: null,
    email,
    emailKey: `${programId}:${email}`,
    name: null,
    referredUserExternalId: null,
    plan: null,
    status: 'ACTIVE' as ReferralDocument['status'],
    createdAt,
    updatedAt: createdAt,
  };
}

/** A live sale paid at `paidAt`, with one commission (in the sale's currency unless told). */
function saleDocument(
  programId: string,
  sale: { paidAt: Date | null; createdAt?: Date; currency: string; totalMinor: number; commissionMinor: number },
  commission: { currency?: string; state?: 'OPEN' | 'VOID' } = {},
  reversedAt: Date | null = null,
): SaleDocument {
  const affiliateId = randomUUID();
  const createdAt = sale.createdAt ?? sale.paidAt ?? new Date();
  return {
    _id: randomUUID(),
    programId,
    affiliateId,
    referralId: randomUUID(),
    promotionalCodeId: null,
    couponId: null,
    promoCode: null,
    linkId: null,
    externalId: `pay_${randomUUID()}`,
    redemptionKey: null,
    customerId: null,
    totalEarnedMinor: sale.totalMinor,
    currency: sale.currency,
    commissionRate: 20,
    commissionEarnedMinor: sale.commissionMinor,
    commissionPlanId: null,
    paymentTrigger: 'PAYMENT',
    ...(sale.paidAt ? { paidAt: sale.paidAt } : {}),
    commissions: [
      {
        id: randomUUID(),
        affiliateId,
        amountMinor: sale.commissionMinor,
        currency: commission.currency ?? sale.currency,
        state: commission.state ?? 'OPEN',
        availableAt: createdAt,
        commissionPlanId: null,
        adjusts: null,
        payoutCreated: false,
        payoutId: null,
      },
    ],
    reversedAt,
    createdAt,
    updatedAt: createdAt,
  } as SaleDocument;
}

async function insertInBatches(connection: Connection, model: (connection: Connection) => mongoose.Model<never>, documents: unknown[]) {
  const collection = model(connection).collection;
  for (let start = 0; start < documents.length; start += 1000) await collection.insertMany(documents.slice(start, start + 1000) as never[]);
}

/**
 * Program A: 1,200 affiliates (800 created in the period, spread over its days and statuses), 1,100
 * referrals (700 in the period), 5,000 sales in the period alternating USD (10.00, commission 2.00)
 * and EUR (7.50, commission 1.50), and one sale for each edge of the rules.
 */
async function seedProgramA() {
  const { programId } = programA;
  const inPeriod = (index: number, hour: number) => new Date(FROM.getTime() + (index % 7) * DAY + hour * 3_600_000);
  await withDatabase('affiliate', (connection) =>
    insertInBatches(
      connection,
      affiliateModel as never,
      Array.from({ length: AFFILIATES }, (_unused, index) =>
        affiliateDocument(programId, index, index < AFFILIATES_IN_PERIOD ? inPeriod(index, 1) : new Date(FROM.getTime() - DAY)),
      ),
    ),
  );
  await withDatabase('referral', (connection) =>
    insertInBatches(
      connection,
      referralModel as never,
      Array.from({ length: REFERRALS }, (_unused, index) =>
        referralDocument(programId, index < REFERRALS_IN_PERIOD ? inPeriod(index, 2) : new Date(TO.getTime() + DAY)),
      ),
    ),
  );
  const sales: SaleDocument[] = [];
  for (let index = 0; index < BULK_SALES; index += 1) {
    const usd = index % 2 === 0;
    const paidAt = inPeriod(index, 3);
    const key = `${usd ? 'USD' : 'EUR'} ${paidAt.toISOString().slice(0, 10)}`;
    bulkPerDay.set(key, (bulkPerDay.get(key) ?? 0) + 1);
    sales.push(
      saleDocument(programId, { paidAt, currency: usd ? 'USD' : 'EUR', totalMinor: usd ? 1000 : 750, commissionMinor: usd ? 200 : 150 }),
    );
  }
  const edge = (paidAt: Date | null, options: { createdAt?: Date } = {}) => ({
    paidAt,
    createdAt: options.createdAt,
    currency: 'USD',
    totalMinor: 100,
    commissionMinor: 10,
  });
  const midPeriod = new Date('2025-03-04T12:00:00.000Z');
  sales.push(
    // Paid at `from` exactly: in. At `to` exactly, and just before `from`: out. Just before `to`: in.
    saleDocument(programId, edge(FROM)),
    saleDocument(programId, edge(new Date(TO.getTime() - 1))),
    saleDocument(programId, edge(TO)),
    saleDocument(programId, edge(new Date(FROM.getTime() - 1))),
    // Reversed: out, its commission too.
    saleDocument(programId, edge(midPeriod), {}, new Date()),
    // Its commission voided: the sale counts, the commission does not.
    saleDocument(programId, edge(midPeriod), { state: 'VOID' }),
    // Stored before paidAt was kept: counted on its createdAt.
    saleDocument(programId, edge(null, { createdAt: midPeriod })),
    // Recorded in the period but paid after it: counted when paid, so out.
    saleDocument(programId, edge(new Date(TO.getTime() + DAY), { createdAt: midPeriod })),
    // A USD sale whose (FLAT) commission is in EUR: the sale in USD, its commission in EUR.
    saleDocument(programId, { ...edge(midPeriod), commissionMinor: 50 }, { currency: 'EUR' }),
  );
  await withDatabase('sale', (connection) => insertInBatches(connection, saleModel as never, sales));
}

/** Program B: its own affiliates, referrals and sales in the same period, which A's summary must never count. */
async function seedProgramB() {
  const { programId } = programB;
  const inPeriod = new Date('2025-03-02T08:00:00.000Z');
  await withDatabase('affiliate', (connection) =>
    insertInBatches(
      connection,
      affiliateModel as never,
      Array.from({ length: 30 }, (_unused, index) => affiliateDocument(programId, index, inPeriod)),
    ),
  );
  await withDatabase('referral', (connection) =>
    insertInBatches(
      connection,
      referralModel as never,
      Array.from({ length: 40 }, () => referralDocument(programId, inPeriod)),
    ),
  );
  await withDatabase('sale', (connection) =>
    insertInBatches(
      connection,
      saleModel as never,
      Array.from({ length: 50 }, () =>
        saleDocument(programId, { paidAt: inPeriod, currency: 'USD', totalMinor: 99_900, commissionMinor: 9_990 }),
      ),
    ),
  );
}

test('the summary counts every affiliate, referral and sale of the period, above the old 1,000 and 5,000 caps, and keeps money per currency, never added across currencies', async () => {
  const summary = await ok(summaryOf(programA.api));
  expect(summary.from).toBe(FROM.toISOString());
  expect(summary.to).toBe(TO.toISOString());
  expect(summary.affiliates).toMatchObject({
    total: AFFILIATES,
    created: AFFILIATES_IN_PERIOD,
    byStatus: STATUSES.map((status) => ({ status, total: AFFILIATES / 4, created: AFFILIATES_IN_PERIOD / 4 })),
  });
  expect(summary.affiliates.daily.map((each: { day: string }) => each.day)).toEqual(DAYS);
  // Affiliate i was created on day i % 7: 800 of them, 115 on each of the first 2 days and 114 on the others.
  expect(summary.affiliates.daily.map((each: { created: number }) => each.created)).toEqual([115, 115, 114, 114, 114, 114, 114]);
  expect(summary.referrals).toMatchObject({ total: REFERRALS, created: REFERRALS_IN_PERIOD });
  expect(summary.referrals.daily.map((each: { created: number }) => each.created)).toEqual([100, 100, 100, 100, 100, 100, 100]);

  // USD: 2,500 bulk sales (10.00, commission 2.00) and the edge sales in (at `from`, before `to`,
  // voided commission, no paidAt, commission in EUR); EUR: 2,500 bulk sales (7.50, commission 1.50)
  // and the one commission of a USD sale.
  expect(summary.sales.count).toBe(5_005);
  const [usd, eur, ...others] = summary.sales.byCurrency;
  expect(others).toEqual([]);
  expect(usd).toMatchObject({ currency: 'USD', sales: 2_505, revenue: 25_005, commission: 5_000.3 });
  expect(eur).toMatchObject({ currency: 'EUR', sales: 2_500, revenue: 18_750, commission: 3_750.5 });
  // Never a figure that adds the two currencies.
  expect(JSON.stringify(summary)).not.toMatch(/43755|8750\.8/);
});

test('the daily series has every day of the period per currency, zeros included, and adds up to the currency\u2019s totals', async () => {
  const summary = await ok(summaryOf(programA.api));
  for (const entry of summary.sales.byCurrency as {
    currency: string;
    sales: number;
    revenue: number;
    daily: { day: string; sales: number; revenue: number }[];
  }[]) {
    expect(entry.daily.map((each) => each.day)).toEqual(DAYS);
    expect(entry.daily.reduce((sum, each) => sum + each.sales, 0)).toBe(entry.sales);
    expect(Math.round(entry.daily.reduce((sum, each) => sum + each.revenue, 0) * 100) / 100).toBe(entry.revenue);
  }
  const [usd, eur] = summary.sales.byCurrency;
  // The first day: the bulk sales of that day and the sale paid at `from` exactly.
  expect(usd.daily[0]).toEqual({
    day: '2025-03-01',
    sales: (bulkPerDay.get('USD 2025-03-01') ?? 0) + 1,
    revenue: (bulkPerDay.get('USD 2025-03-01') ?? 0) * 10 + 1,
    commission: Math.round(((bulkPerDay.get('USD 2025-03-01') ?? 0) * 2 + 0.1) * 100) / 100,
  });
  // The last day: with the sale paid a millisecond before `to`.
  expect(usd.daily[6].sales).toBe((bulkPerDay.get('USD 2025-03-07') ?? 0) + 1);
  // The EUR commission of the USD sale on 4 March, beside no EUR sale of its own.
  expect(eur.daily[3]).toEqual({
    day: '2025-03-04',
    sales: bulkPerDay.get('EUR 2025-03-04'),
    revenue: (bulkPerDay.get('EUR 2025-03-04') ?? 0) * 7.5,
    commission: (bulkPerDay.get('EUR 2025-03-04') ?? 0) * 1.5 + 0.5,
  });
});

test("another program's affiliates, referrals and sales are never counted, and it sees only its own", async () => {
  const a = await ok(summaryOf(programA.api));
  expect(a.affiliates.total).toBe(AFFILIATES);
  expect(a.referrals.total).toBe(REFERRALS);
  const b = await ok(summaryOf(programB.api));
  expect(b.affiliates).toMatchObject({ total: 30, created: 30 });
  expect(b.referrals).toMatchObject({ total: 40, created: 40 });
  expect(b.sales.count).toBe(50);
  expect(b.sales.byCurrency).toMatchObject([{ currency: 'USD', sales: 50, revenue: 49_950, commission: 4_995 }]);
});

test('without dates the summary covers the last 30 days up to now, with the reporting currency first even without sales in it', async () => {
  const program = await system.createProgram();
  await ok(
    program.api.post('/commission-plans', {
      name: 'Ten percent',
      commissionType: 'PERCENTAGE',
      rate: 10,
      recurring: 'FOREVER',
      holdDays: 0,
      isDefault: true,
    }),
  );
  await ok(program.api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', affiliateLink: 'ada' }));
  const referral = await ok(program.api.post('/referrals', { link: 'ada', email: 'customer@example.com' }));
  await ok(program.api.post('/sales', { referralId: referral.id, totalEarned: 20, currency: 'EUR' }));
  // Paid 40 days ago: before the default period.
  await ok(
    program.api.post('/sales', {
      referralId: referral.id,
      totalEarned: 500,
      currency: 'EUR',
      paidAt: new Date(Date.now() - 40 * DAY).toISOString(),
    }),
  );
  const before = Date.now();
  const summary = await ok(summaryOf(program.api, ''));
  expect(Date.parse(summary.to)).toBeGreaterThanOrEqual(before - 1000);
  expect(Date.parse(summary.to) - Date.parse(summary.from)).toBe(30 * DAY);
  expect(summary.affiliates).toMatchObject({
    total: 1,
    created: 1,
    byStatus: expect.arrayContaining([{ status: 'ACTIVE', total: 1, created: 1 }]),
  });
  expect(summary.referrals).toMatchObject({ total: 1, created: 1 });
  expect(summary.sales.count).toBe(1);
  expect(summary.sales.byCurrency).toMatchObject([
    { currency: 'USD', sales: 0, revenue: 0, commission: 0 },
    { currency: 'EUR', sales: 1, revenue: 20, commission: 2 },
  ]);
  expect(summary.sales.byCurrency[0].daily).toHaveLength(31);
});

test('bad dates, a reversed period, a period over 366 days and unknown parameters are refused with 400 naming the parameter, and the summary is unchanged', async () => {
  const before = await ok(summaryOf(programA.api));
  const refusals: [string, string, string][] = [
    ['?from=yesterday', 'parameter_invalid', 'from'],
    [`?from=${FROM.toISOString()}&to=not-a-date`, 'parameter_invalid', 'to'],
    [`?from=${TO.toISOString()}&to=${FROM.toISOString()}`, 'parameter_invalid', 'to'],
    [`?from=${FROM.toISOString()}&to=${FROM.toISOString()}`, 'parameter_invalid', 'to'],
    [`?from=2023-01-01T00:00:00Z&to=${TO.toISOString()}`, 'parameter_invalid', 'to'],
    [`?from=${new Date(Date.now() + DAY).toISOString()}`, 'parameter_invalid', 'from'],
    ['?since=2025-01-01T00:00:00Z', 'parameter_unknown', 'since'],
  ];
  for (const [query, code, param] of refusals) {
    const answer = await summaryOf(programA.api, query);
    expect({ query, status: answer.status, code: answer.body.code, param: answer.body.param }).toEqual({ query, status: 400, code, param });
  }
  expect(await ok(summaryOf(programA.api))).toEqual(before);
});

test('the summary needs the read scope', async () => {
  const key = await system
    .admin()
    .post(`/admin/v1/programs/${programA.programId}/api-keys`, { scopes: ['write'] })
    .then((answer) => answer.body.key as string);
  const answer = await fetch(`${system.gatewayUrl}/api/v1/reports/summary`, { headers: { authorization: `Bearer ${key}` } });
  expect(answer.status).toBe(403);
});
