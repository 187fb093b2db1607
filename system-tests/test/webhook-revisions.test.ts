import { randomUUID } from 'node:crypto';
import { eventually } from '@affiliate/platform/testing';
import { okBody, type Api } from '../harness';
import { systemWithSubscriber } from '../world';

/**
 * Every family's `*.updated` carries the object's next revision and, in previousAttributes, the
 * fields the change altered with their old values: read from GET /events, which answers the bodies
 * exactly as delivered. One program per test; nothing else changes the object in between.
 */
const world = systemWithSubscriber();

type Event = { id: string; event: string; data: Record<string, unknown>; revision?: number; previousAttributes?: Record<string, unknown> };

/** The object's created and updated events, once both are stored, oldest first. */
async function createdThenUpdated(api: Api, objectId: string): Promise<[Event, Event]> {
  return eventually(async () => {
    const events = (await okBody<Event[]>(api.get(`/events?objectId=${objectId}`))).reverse();
    expect(events.map((event) => event.event.split('.')[1])).toEqual(['created', 'updated']);
    return events as [Event, Event];
  }, 60_000);
}

/** The update is the object's next revision, and previousAttributes lists `changed` with the created event's values (updatedAt aside). */
function expectNextRevisionChanging([created, updated]: [Event, Event], changed: string[]): void {
  expect(created.revision).toBe(0);
  expect(updated.revision).toBe(1);
  const { updatedAt: _updatedAt, ...previous } = updated.previousAttributes ?? {};
  expect(previous).toEqual(Object.fromEntries(changed.map((field) => [field, created.data[field] ?? null])));
  for (const field of changed) expect(updated.data[field]).not.toEqual(previous[field]);
}

const email = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;

test('a sale changed by PUT /sales is announced at its next revision, and previousAttributes holds the old total among the fields that changed', async () => {
  const { api } = await world.system.createProgram();
  const affiliate = await okBody(api.post('/affiliates', { firstName: 'Grace', lastName: 'Hopper', email: email('grace') }));
  const referral = await okBody(api.post('/referrals', { affiliateId: affiliate.id, email: email('customer') }));
  const sale = await okBody(api.post('/sales', { referralId: referral.id, totalEarned: 100 }));
  await okBody(api.put('/sales', { saleId: sale.id, totalEarned: 60 }));

  const [created, updated] = await createdThenUpdated(api, sale.id);
  expect(created.revision).toBe(0);
  expect(updated.revision).toBe(1);
  expect(updated.data.totalEarned).toBe(60);
  expect(updated.previousAttributes).toMatchObject({ totalEarned: 100 });
  // Only fields whose value changed are listed.
  for (const [field, old] of Object.entries(updated.previousAttributes ?? {}))
    expect({ field, value: updated.data[field] }).not.toEqual({ field, value: old });
});

test('a coupon changed by PUT /coupons is announced at its next revision, with exactly the changed fields in previousAttributes', async () => {
  const { api } = await world.system.createProgram();
  const coupon = await okBody(api.post('/coupons', { name: 'Ten off', percentOff: 10 }));
  await okBody(api.put('/coupons', { couponId: coupon.id, name: 'Ten percent off' }));

  expectNextRevisionChanging(await createdThenUpdated(api, coupon.id), ['name']);
});

test('a promotional code changed by PUT /promotional-codes is announced at its next revision, with exactly the changed fields in previousAttributes', async () => {
  const { api } = await world.system.createProgram();
  const coupon = await okBody(api.post('/coupons', { name: 'Ten off', percentOff: 10 }));
  const code = await okBody(api.post('/promotional-codes', { couponId: coupon.id, code: 'SPRING10' }));
  await okBody(api.put('/promotional-codes', { promotionalCodeId: code.id, maxRedemptions: 5 }));

  expectNextRevisionChanging(await createdThenUpdated(api, code.id), ['maxRedemptions']);
});

test('a referral changed by PUT /referrals is announced at its next revision, with exactly the changed fields in previousAttributes', async () => {
  const { api } = await world.system.createProgram();
  const affiliate = await okBody(api.post('/affiliates', { firstName: 'Ada', lastName: 'Byron', email: email('ada') }));
  const referral = await okBody(api.post('/referrals', { affiliateId: affiliate.id, email: email('customer') }));
  await okBody(api.put('/referrals', { referralId: referral.id, plan: 'pro' }));

  expectNextRevisionChanging(await createdThenUpdated(api, referral.id), ['plan']);
});
