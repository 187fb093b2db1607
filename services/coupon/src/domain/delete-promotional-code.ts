import { createEvent, notFound } from '@affiliate/platform';
import type { CouponRepositories } from '../data-access/repositories';

export type DeletedPromotionalCode = { id: string; deleted: true };

export async function deletePromotionalCode(
  repositories: CouponRepositories,
  programId: string,
  promotionalCodeId: string,
): Promise<DeletedPromotionalCode> {
  const deleted = await repositories.promotionalCodes.remove(programId, promotionalCodeId, (current) => [
    createEvent('promocode.deleted', programId, { id: current._id }),
  ]);
  if (!deleted) throw notFound(`Promotional code ${promotionalCodeId} not found in this program`);
  return { id: deleted._id, deleted: true };
}
