import { z } from '@affiliate/contracts';
import { processedEvents, type ServiceContext } from '@affiliate/platform';
import type { CouponRepositories } from '../../data-access/repositories';
import type { AffiliateDirectory } from '../../data-access/affiliate-directory';
import { issueCodesOfRules, issueRuleToActiveAffiliates } from '../../domain/issue-affiliate-codes';
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

/** What the autoCouponRule needs of an affiliate event: who, whether ACTIVE, and since when it exists. */
const RuledAffiliate = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  status: z.string(),
  createdAt: z.string(),
});

/** What the background ALL_AFFILIATES run reads of a coupon event. */
const RuledCoupon = z.object({
  id: z.string(),
  autoCouponRule: z.object({ appliesTo: z.string() }).passthrough().nullable().optional(),
  autoCouponRuleProgress: z.object({ done: z.boolean() }).passthrough().optional(),
});

/** Every event the coupon service consumes. */
export async function subscribe(context: ServiceContext, repositories: CouponRepositories, affiliates: AffiliateDirectory): Promise<void> {
  await context.bus.subscribe({
    queue: 'coupon.affiliates',
    eventTypes: ['affiliate.created', 'affiliate.updated', 'affiliate.deleted'],
    processedEvents: processedEvents(context.connection, 'coupon.affiliates'),
    handler: async (event) => {
      // Issuing codes and refreshing the affiliate on its codes are independent: one failing does not skip the other; the event is retried after both ran (each idempotent).
      const work: Promise<unknown>[] = [];
      if (event.type === 'affiliate.created' || event.type === 'affiliate.updated') {
        // An affiliate created or approved ACTIVE gets its codes of the coupons with an autoCouponRule, once per coupon.
        work.push(issueCodesOfRules({ repositories, affiliates }, event.programId, RuledAffiliate.parse(event.data), context.logger));
      }
      if (event.type === 'affiliate.updated') {
        const { updatedAt, ...affiliate } = UpdatedAffiliate.parse(event.data);
        work.push(refreshAffiliateOnCodes(repositories, event.programId, affiliate, new Date(updatedAt ?? event.occurredAt)));
      } else if (event.type === 'affiliate.deleted') {
        work.push(unassignDeletedAffiliate(repositories, event.programId, DeletedAffiliate.parse(event.data).id));
      }
      const failed = (await Promise.allSettled(work)).find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    },
  });
  // ALL_AFFILIATES runs here, not in the request that sets the rule: a large program would outlast the gateway's timeout.
  await context.bus.subscribe({
    queue: 'coupon.rules',
    eventTypes: ['coupon.created', 'coupon.updated'],
    processedEvents: processedEvents(context.connection, 'coupon.rules'),
    handler: async (event) => {
      const coupon = RuledCoupon.parse(event.data);
      if (coupon.autoCouponRule?.appliesTo !== 'ALL_AFFILIATES' || coupon.autoCouponRuleProgress?.done !== false) return;
      await issueRuleToActiveAffiliates({ repositories, affiliates }, event.programId, coupon.id);
    },
  });
}
