import { randomUUID } from 'node:crypto';
import { Affiliate, exampleEventData, type EventEnvelope } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { eventually } from '@affiliate/platform/testing';
import { createAffiliate, eventsOf, newProgramId, startAffiliateService, type Harness } from './affiliate-service';

/**
 * affiliate.updated lists in previousAttributes what changed with its old values, also where the
 * change is to something read beside the affiliate (its plan, its links) rather than stored on it.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startAffiliateService();
});
afterAll(async () => {
  await harness.stop();
});

/** The one affiliate.updated about the affiliate that matches, once published. */
async function updatedEvent(affiliateId: string, matching: (data: Affiliate) => boolean): Promise<EventEnvelope> {
  return eventually(() => {
    const found = eventsOf(harness, 'affiliate.updated', affiliateId).filter((event) => matching(Affiliate.parse(event.data)));
    expect(found).toHaveLength(1);
    return found[0] as EventEnvelope;
  });
}

/** previousAttributes without updatedAt, which changes with every update (unless two land in one millisecond). */
function changedBesidesUpdatedAt(event: EventEnvelope): Record<string, unknown> {
  const { updatedAt: _updatedAt, ...rest } = event.previousAttributes ?? {};
  return rest;
}

test('a plan reassignment lists commissionPlan and commissionTier in previousAttributes with the old plan and the tier reached on it', async () => {
  const programId = newProgramId();
  const api = harness.api(programId);
  const tiered = (
    await api.post('/commission-plans', {
      name: 'Tiered',
      commissionType: 'PERCENTAGE',
      rate: 5,
      recurring: 'FOREVER',
      tiers: [{ metric: 'SALES_COUNT', threshold: 1, rate: 8 }],
    })
  ).body;
  const flat = (await api.post('/commission-plans', { name: 'Flat', commissionType: 'PERCENTAGE', rate: 10, recurring: 'FOREVER' })).body;
  const affiliate = Affiliate.parse(
    (await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', commissionPlanId: tiered.id })).body,
  );
  // One sale reaches the tiered plan's first tier.
  const sale = exampleEventData('sale.created', {
    id: randomUUID(),
    affiliateId: affiliate.id,
    linkId: affiliate.affiliateLinks[0]?.id,
    totalEarned: 20,
    currency: 'USD',
  });
  await harness.publish(createEvent('sale.created', programId, sale));
  const tier = { level: 1, metric: 'SALES_COUNT', threshold: 1, rate: 8 };
  await eventually(async () => expect((await api.get('/affiliates', { id: affiliate.id })).body.commissionTier).toEqual(tier));

  const reassigned = await api.put('/affiliates', { affiliateId: affiliate.id, commissionPlanId: flat.id });
  expect(reassigned.status).toBe(200);

  const event = await updatedEvent(affiliate.id, (data) => data.commissionPlan?.id === flat.id);
  expect(event.data).toMatchObject({ commissionPlan: { id: flat.id, name: 'Flat' }, commissionTier: null });
  expect(changedBesidesUpdatedAt(event)).toEqual({ commissionPlan: { id: tiered.id, name: 'Tiered' }, commissionTier: tier });
});

test('PUT /affiliates with a new affiliateLink lists affiliateLinks in previousAttributes with the links before it', async () => {
  const api = harness.api(newProgramId());
  const affiliate = await createAffiliate(api, 'bea@example.com', 'first');
  const appended = await api.put('/affiliates', { affiliateId: affiliate.id, affiliateLink: 'second' });
  expect(appended.status).toBe(200);

  const event = await updatedEvent(affiliate.id, (data) => data.affiliateLinks.length === 2);
  expect(changedBesidesUpdatedAt(event)).toEqual({ affiliateLinks: affiliate.affiliateLinks });
});
