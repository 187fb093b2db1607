import type { EventEnvelope } from '@affiliate/contracts';
import { updateWithEvents, type OutboxFields } from '@affiliate/platform';
import type { Model } from 'mongoose';
import type { CouponRecord } from './coupon-model';
import type { CouponModels } from './models';
import type { PromotionalCodeRecord } from './promotional-code-model';
import { releasedKey } from './unique-keys';

/**
 * Like the platform's tombstoneWithEvents, but unique keys are replaced by a per-document
 * placeholder instead of unset: this server treats every missing key as the same null, so two
 * unset tombstones would collide in the unique index.
 */
async function tombstone<Doc extends { _id: string }>(
  model: Model<Doc>,
  filter: Record<string, unknown>,
  releasedKeys: (current: Doc) => Partial<Doc>,
  events: (current: Doc & OutboxFields) => EventEnvelope[],
): Promise<(Doc & OutboxFields) | null> {
  return updateWithEvents(model, filter, (current) => ({
    set: { ...releasedKeys(current), deletedAt: new Date() } as Partial<Doc>,
    events,
  }));
}

export function tombstoneCoupon(models: CouponModels, programId: string, couponId: string, events: (current: CouponRecord) => EventEnvelope[]) {
  return tombstone(models.coupons, { programId, _id: couponId }, (current) => ({ externalIdKey: releasedKey(current._id) }), events);
}

export function tombstonePromotionalCode(
  models: CouponModels,
  programId: string,
  promotionalCodeId: string,
  events: (current: PromotionalCodeRecord) => EventEnvelope[],
) {
  return tombstone(
    models.promotionalCodes,
    { programId, _id: promotionalCodeId },
    (current) => ({ codeKey: releasedKey(current._id), externalIdKey: releasedKey(current._id) }),
    events,
  );
}
