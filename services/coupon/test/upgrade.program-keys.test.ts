import { randomUUID } from 'node:crypto';
import { bootService } from '@affiliate/platform';
import { newProgramId, serviceApi, testInfra, testServiceSettings } from '@affiliate/platform/testing';
import mongoose, { type Connection } from 'mongoose';
import { buildCouponService } from '../src/service';
import { startCouponService, type Harness } from './coupon-service';

let harness: Harness;
beforeAll(async () => {
  harness = await startCouponService();
});
afterAll(async () => {
  await harness.stop();
});

/**
 * Writes what the version before the aggregate store left in the database: code and externalId
 * keys without their program, unique per (programId, key), and redemptions under random ids.
 */
async function rewriteAsPreviousVersion(db: Connection): Promise<void> {
  for (const name of ['coupons', 'promotional_codes']) {
    const collection = db.collection(name);
    for (const field of ['externalIdKey', 'codeKey']) await collection.dropIndex(`${field}_1`).catch(() => undefined);
    await collection.createIndex({ programId: 1, externalIdKey: 1 }, { unique: true });
    for await (const document of collection.find({})) {
      const unprefixed = (key: unknown) => (typeof key === 'string' ? key.slice(String(document.programId).length + 1) : key);
      await collection.updateOne(
        { _id: document._id },
        {
          $set: {
            externalIdKey: unprefixed(document.externalIdKey),
            ...(document.codeKey ? { codeKey: unprefixed(document.codeKey) } : {}),
          },
        },
      );
    }
  }
  const redemptions = db.collection<{ _id: string }>('redemptions');
  for await (const redemption of redemptions.find({})) {
    await redemptions.insertOne({ ...redemption, _id: randomUUID() });
    await redemptions.deleteOne({ _id: redemption._id });
  }
  await db.collection('migrations').deleteMany({});
}

test('data written by the previous version is found after the upgrade: the same code in two programs, externalIds and replayed redemptions', async () => {
  const programs = [newProgramId(), newProgramId()];
  const created = [];
  for (const programId of programs) {
    const api = harness.api(programId);
    const affiliate = await harness.createAffiliate(programId);
    const coupon = (await api.post('/coupons', { name: 'Spring', percentOff: 10, externalId: 'cp_spring' }).expect(200)).body;
    const code = (
      await api
        .post('/promotional-codes', { couponId: coupon.id, code: 'SPRING', affiliateId: affiliate.id, externalId: 'pc_spring' })
        .expect(200)
    ).body;
    created.push({ programId, coupon, code });
  }
  const [first] = created as [(typeof created)[number]];
  const redemption = { code: 'spring', redemptionKey: 'sale:order_1', totalEarned: 100, currency: 'USD' };
  const redeemed = (await harness.api(first.programId).post('/internal/redemptions', redemption).expect(200)).body;

  await harness.coupon.stop();
  const settings = harness.coupon.context.settings;
  const db = await mongoose.createConnection(testInfra().mongoUrl, { dbName: settings.dbName }).asPromise();
  await rewriteAsPreviousVersion(db);
  await db.close();
  const upgraded = await bootService(testServiceSettings('coupon', { dbName: settings.dbName, exchange: settings.exchange }), (context) =>
    buildCouponService(context, { affiliateUrl: harness.affiliate.url }),
  );
  try {
    for (const { programId, coupon, code } of created) {
      const api = serviceApi(upgraded.url, programId);
      expect((await api.get('/promotional-codes?code=Spring').expect(200)).body.id).toBe(code.id);
      expect((await api.get('/promotional-codes?externalId=pc_spring').expect(200)).body.id).toBe(code.id);
      expect((await api.get('/coupons?externalId=cp_spring').expect(200)).body.id).toBe(coupon.id);
      expect((await api.post('/promotional-codes', { couponId: coupon.id, code: 'SPRING' })).status).toBe(400);
    }
    // The same redemption key replays the redemption made before the upgrade: counted once.
    const api = serviceApi(upgraded.url, first.programId);
    expect((await api.post('/internal/redemptions', redemption).expect(200)).body).toEqual(redeemed);
    expect((await api.get(`/promotional-codes?id=${first.code.id}`).expect(200)).body.timesRedeemed).toBe(1);
  } finally {
    await upgraded.stop();
  }
});

test('two replicas of the new version started together on the previous version’s data both come up, and the data is found through either', async () => {
  const settings = harness.coupon.context.settings;
  const db = await mongoose.createConnection(testInfra().mongoUrl, { dbName: settings.dbName }).asPromise();
  await rewriteAsPreviousVersion(db);
  await db.close();
  const boot = () =>
    bootService(testServiceSettings('coupon', { dbName: settings.dbName, exchange: settings.exchange }), (context) =>
      buildCouponService(context, { affiliateUrl: harness.affiliate.url }),
    );
  // Before the fix, the second to finish the migration failed to record it (a taken _id) and exited.
  const replicas = await Promise.allSettled([boot(), boot()]);
  try {
    expect(replicas.map((replica) => (replica.status === 'fulfilled' ? 'up' : String(replica.reason)))).toEqual(['up', 'up']);
    for (const replica of replicas) {
      if (replica.status !== 'fulfilled') continue;
      // The first test's data, under every program that wrote it, through either replica.
      const found = await replica.value.context.connection.collection('promotional_codes').find({}).toArray();
      expect(found.length).toBeGreaterThan(0);
      for (const document of found) {
        const api = serviceApi(replica.value.url, String(document.programId));
        expect((await api.get(`/promotional-codes?code=${String(document.code)}`).expect(200)).body.id).toBe(String(document._id));
      }
    }
  } finally {
    await Promise.all(replicas.map((replica) => (replica.status === 'fulfilled' ? replica.value.stop() : undefined)));
  }
});
