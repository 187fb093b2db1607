import { z } from '@affiliate/contracts';
import { processedEvents, type ServiceContext } from '@affiliate/platform';
import type { CouponRepositories } from '../../data-access/repositories';
import { refreshAffiliateOnCodes, unassignDeletedAffiliate } from '../../domain/sync-affiliate';

/** What this service reads of an affiliate.updated payload: the summary its codes embed. */
const UpdatedAffiliate = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  updatedAt: z.string().datetime({ offset: true }).optional(),
});

const DeletedAffiliate = z.object({ id: z.string() });

/** Every event the coupon service consumes. */
export async function subscribe(context: ServiceContext, repositories: CouponRepositories): Promise<void> {
  await context.bus.subscribe({
    queue: 'coupon.affiliates',
    eventTypes: ['affiliate.updated', 'affiliate.deleted'],
    processedEvents: processedEvents(context.connection, 'coupon.affiliates'),
    handler: async (event) => {
      if (event.type === 'affiliate.updated') {
        const { updatedAt, ...affiliate } = UpdatedAffiliate.parse(event.data);
        await refreshAffiliateOnCodes(repositories, event.programId, affiliate, new Date(updatedAt ?? event.occurredAt));
      } else if (event.type === 'affiliate.deleted') {
        await unassignDeletedAffiliate(repositories, event.programId, DeletedAffiliate.parse(event.data).id);
      }
    },
  });
}
