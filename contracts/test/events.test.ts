import {
  EventEnvelope,
  PUBLIC_EVENT_TYPES,
  PublicEventType,
  acceptedEventDataSchemaOf,
  exampleEventData,
  isPublicEventType,
  type EventType,
} from '@affiliate/contracts';

test('the public event types are exactly every family times created, updated, deleted', () => {
  const expected = ['affiliate', 'referral', 'sale', 'coupon', 'promocode'].flatMap((family) =>
    ['created', 'updated', 'deleted'].map((action) => `${family}.${action}`),
  );
  expect([...PUBLIC_EVENT_TYPES].sort()).toEqual(expected.sort());
});

test('the promotional-code family is named promocode', () => {
  expect(PublicEventType.safeParse('promotional_code.created').success).toBe(false);
  expect(PublicEventType.safeParse('promotional-code.created').success).toBe(false);
  expect(isPublicEventType('promocode.created')).toBe(true);
});

test('internal event types are not public', () => {
  expect(isPublicEventType('program.updated')).toBe(false);
});

test('the envelope requires id, type, programId, occurredAt and data', () => {
  const valid = {
    id: '0b0f1a9e-3c1d-4f5e-9a7b-2c3d4e5f6a7b',
    type: 'sale.deleted',
    programId: '1b0f1a9e-3c1d-4f5e-9a7b-2c3d4e5f6a7b',
    occurredAt: new Date().toISOString(),
    data: { id: 'x' },
  };
  expect(EventEnvelope.safeParse(valid).success).toBe(true);
  expect(EventEnvelope.safeParse({ ...valid, type: 'payout.created' }).success).toBe(false);
});

test('referral and sale events published before risk signals existed (no risk, no attribution) are accepted by consumers, not dead-lettered', () => {
  const withoutRisk = (data: Record<string, unknown>) => {
    const { risk: _risk, attribution: _attribution, ...older } = data;
    return older;
  };
  const types: EventType[] = ['referral.created', 'referral.updated', 'sale.created', 'sale.updated'];
  for (const type of types) {
    const data = withoutRisk(exampleEventData(type) as Record<string, unknown>);
    if (type === 'sale.created') data.referral = withoutRisk(data.referral as Record<string, unknown>);
    expect([type, acceptedEventDataSchemaOf(type).safeParse(data).success]).toEqual([type, true]);
  }
});
