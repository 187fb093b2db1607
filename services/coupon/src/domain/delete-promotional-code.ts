import { createEvent, notFound } from '@affiliate/platform';
import type { CouponModels } from '../data-access/models';
import { tombstonePromotionalCode } from '../data-access/tombstones';

/** As every DELETE but DELETE /coupons (whose shape the specification fixes): the id and `deleted: true`. */
export type DeletedPromotionalCode = { id: string; deleted: true };

/** The code string and externalId are free for a new code at once. */
export async function deletePromotionalCode(models: CouponModels, programId: string, promotionalCodeId: string): Promise<DeletedPromotionalCode> {
  const deleted = await tombstonePromotionalCode(models, programId, promotionalCodeId, (current) => [
    createEvent('promocode.deleted', programId, { id: current._id }),
  ]);
  if (!deleted) throw notFound(`Promotional code ${promotionalCodeId} not found in this program`);
  return { id: deleted._id, deleted: true };
}
