import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import mongoose from 'mongoose';
import { closedLoop, pacedLoop } from '../lib/paced-load';
import { round, sleep, summarize } from '../lib/stats';
import { withPeakMemory, type ResourceUse, type ScenarioContext } from './context';

export type GrowthFigures = {
  getByIdPerSecond: number;
  salesPerSecond: number;
  eventLatencyMs: { p50: number; p99: number };
};

export type DataGrowth = {
  /** Objects of another program stored between the two measurements. */
  objects: number;
  eventRatePerSecond: number;
  empty: GrowthFigures;
  grown: GrowthFigures;
  /** grown / empty for throughputs, empty / grown for the latency: 1 means unchanged, lower is worse. */
  ratios: { getById: number; salesByCode: number; eventToWebhookP50: number };
};

/**
 * The three hot paths measured with (almost) nothing stored, and again after another program's
 * objects were written straight into the services' databases (coupons, promotional codes,
 * affiliates, sales, webhook deliveries, in equal parts). A hot path that scans would slow down
 * with the other program's data; a point operation would not.
 */
export async function dataGrowth(context: ScenarioContext): Promise<DataGrowth & ResourceUse> {
  const { bench, receiver, plan } = context;
  const program = await bench.createProgram();
  const tag = randomUUID().slice(0, 8);
  const path = '/growth';
  await receiver.subscribe(program.api, path);
  const affiliate = await program.api.expectOk<{ id: string }>('POST', '/affiliates', {
    firstName: 'Growth',
    lastName: 'Bench',
    email: `growth-${tag}@example.com`,
  });
  const coupon = await program.api.expectOk<{ id: string }>('POST', '/coupons', { name: 'Growth bench', percentOff: 10 });
  const promoCode = `GROWTH${tag.toUpperCase()}`;
  await program.api.expectOk('POST', '/promotional-codes', { couponId: coupon.id, code: promoCode, affiliateId: affiliate.id });

  const { arrivedAt, stop: stopListening } = receiver.firstArrivals(path);
  let sequence = 0;
  const { seconds, connections, objects, eventRatePerSecond } = plan.dataGrowth;

  const measure = async (label: string): Promise<GrowthFigures> => {
    const reads = await closedLoop({ connections, seconds, send: () => program.api.send('GET', `/coupons?id=${coupon.id}`) });
    const sales = await closedLoop({
      connections,
      seconds,
      send: () => program.api.send('POST', '/sales', { promoCode, totalEarned: 100, externalId: `growth-${tag}-${sequence++}` }),
    });
    const acceptedAt = new Map<string, number>();
    await pacedLoop({
      rate: eventRatePerSecond,
      seconds,
      maxInFlight: 64,
      fire: async () => {
        const answer = await program.api.send('POST', '/affiliates', {
          firstName: 'Growth',
          lastName: `Event ${sequence}`,
          email: `growth-${tag}-${sequence++}@example.com`,
        });
        if (answer.status !== 200) return false;
        acceptedAt.set((JSON.parse(answer.body) as { id: string }).id, answer.answeredAt);
        return true;
      },
    });
    const deadline = performance.now() + 20_000;
    while ([...acceptedAt.keys()].some((id) => !arrivedAt.has(id)) && performance.now() < deadline) await sleep(100);
    const latency = summarize([...acceptedAt].map(([id, at]) => (arrivedAt.get(id) ?? performance.now()) - at));
    const figures: GrowthFigures = {
      getByIdPerSecond: round((reads.statusCodes['200'] ?? 0) / reads.seconds, 1),
      salesPerSecond: round((sales.statusCodes['200'] ?? 0) / sales.seconds, 1),
      eventLatencyMs: { p50: round(latency.p50, 1), p99: round(latency.p99, 1) },
    };
    context.log(
      `  ${label}: GET by id ${figures.getByIdPerSecond}/s, POST /sales ${figures.salesPerSecond}/s, event → webhook p50 ${figures.eventLatencyMs.p50} ms, p99 ${figures.eventLatencyMs.p99} ms`,
    );
    return figures;
  };

  return withPeakMemory(context, async () => {
    // Warm (JIT, connection pools) before the first figures, so the ratio compares data, not warmth.
    await closedLoop({ connections, seconds: seconds / 2, send: () => program.api.send('GET', `/coupons?id=${coupon.id}`) });
    await closedLoop({
      connections,
      seconds: seconds / 2,
      send: () => program.api.send('POST', '/sales', { promoCode, totalEarned: 100, externalId: `growth-${tag}-${sequence++}` }),
    });
    const empty = await measure('before');
    context.log(`  storing ${objects} objects of another program`);
    await storeOtherProgramsObjects(bench.system.mongo.url, bench.system.dbPrefix, objects);
    const grown = await measure(`with ${objects} objects of another program`);
    stopListening();
    return {
      objects,
      eventRatePerSecond,
      empty,
      grown,
      ratios: {
        getById: round(grown.getByIdPerSecond / empty.getByIdPerSecond, 3),
        salesByCode: round(grown.salesPerSecond / empty.salesPerSecond, 3),
        eventToWebhookP50: round(empty.eventLatencyMs.p50 / grown.eventLatencyMs.p50, 3),
      },
    };
  });
}

/**
 * Another program's objects, written straight into each service's database in the shape its
 * collections hold (unique keys distinct, no pending events), in batches of a thousand.
 */
async function storeOtherProgramsObjects(mongoUrl: string, dbPrefix: string, total: number): Promise<void> {
  const programId = randomUUID();
  const each = Math.floor(total / 5);
  const now = new Date();
  const common = (index: number) => ({
    programId,
    createdAt: new Date(now.getTime() - index),
    updatedAt: now,
    deletedAt: null,
    revision: 0,
    _outbox: [],
  });
  const kinds: Array<{ service: string; collection: string; build: (index: number) => Record<string, unknown> }> = [
    {
      service: 'coupon',
      collection: 'coupons',
      build: (i) => ({ ...common(i), name: `Other ${i}`, percentOff: 10, externalIdKey: `other-${i}`, timesRedeemed: 0 }),
    },
    {
      service: 'coupon',
      collection: 'promotional_codes',
      build: (i) => ({
        ...common(i),
        code: `OTHER${i}`,
        codeKey: `OTHER${i}`,
        externalIdKey: `other-${i}`,
        couponId: randomUUID(),
        active: true,
        timesRedeemed: 0,
      }),
    },
    {
      service: 'affiliate',
      collection: 'affiliates',
      build: (i) => ({
        ...common(i),
        firstName: 'Other',
        lastName: `${i}`,
        email: `other-${i}@example.com`,
        emailKey: `${programId}:other-${i}@example.com`,
      }),
    },
    {
      service: 'sale',
      collection: 'sales',
      build: (i) => ({ ...common(i), totalEarned: 100, affiliateId: randomUUID(), commissions: [] }),
    },
    {
      service: 'webhook_dispatcher',
      collection: 'webhook_deliveries',
      build: (i) => ({
        programId,
        endpointId: randomUUID(),
        eventId: randomUUID(),
        eventType: 'affiliate.created',
        body: '{}',
        status: 'succeeded',
        attempts: [],
        scheduledAttempts: 1,
        nextAttemptAt: null,
        lockedUntil: new Date(0),
        lockToken: null,
        createdAt: new Date(now.getTime() - i),
        updatedAt: now,
      }),
    },
  ];
  const client = await mongoose.mongo.MongoClient.connect(mongoUrl);
  try {
    for (const kind of kinds) {
      const collection = client.db(`${dbPrefix}_${kind.service}`).collection(kind.collection);
      for (let start = 0; start < each; start += 1000) {
        const batch = Array.from({ length: Math.min(1000, each - start) }, (_, offset) => ({
          _id: randomUUID(),
          ...kind.build(start + offset),
        }));
        await collection.insertMany(batch as never[], { ordered: false });
      }
    }
  } finally {
    await client.close();
  }
}
