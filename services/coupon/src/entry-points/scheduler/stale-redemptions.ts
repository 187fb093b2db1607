import { TickAndNudge, type Logger } from '@affiliate/platform';
import type { CouponRepositories } from '../../data-access/repositories';
import { giveBackStaleRedemptions } from '../../domain/give-back-stale-redemptions';
import { STALE_CLAIM_MS } from '../../domain/redeem-promotional-code';

/**
 * In every replica, once it consumes and then every STALE_CLAIM_MS: redemptions left half-counted by a process
 * that died are given back, so a code's and its coupon's counters come back to the sales recorded
 * within two minutes of the death even when no retry of the sale follows. A read of the pending claims
 * (an index range on MongoDB, a scan of the redemptions locally, once a minute, as the relay's sweep).
 */
export function staleRedemptionSweep(repositories: CouponRepositories, logger: Logger): TickAndNudge {
  return new TickAndNudge({
    everyMs: STALE_CLAIM_MS,
    look: async () => {
      try {
        const given = await giveBackStaleRedemptions(repositories);
        if (given > 0) logger.warn({ given }, 'gave back redemptions whose counting stopped half-way (the process counting them died)');
      } catch (error) {
        logger.warn({ err: error }, 'could not look for redemptions whose counting stopped half-way; the next sweep will');
      }
    },
  });
}
