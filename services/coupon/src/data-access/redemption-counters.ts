import { AggregateStore, type Aggregate, type Decide } from '@affiliate/platform';

/** What a redemption counts on: a code or a coupon, each with its own limit. */
export type Counted = Aggregate & { maxRedemptions: number | null; timesRedeemed: number; _redemptionKeys?: string[] };

export type CountOutcome = 'counted' | 'limit reached' | 'gone';

/**
 * A store whose documents count redemptions: atomically within the document and never past the
 * limit. The redemption key travels with the increment, so counting the same redemption twice (a
 * retry after a crash) is a no-op that reports success. Counting does not touch the revision: a
 * change of the limit guards its own write with the count instead (changeWithinLimit).
 */
export class CountedStore<Doc extends Counted> extends AggregateStore<Doc> {
  /** Adds one redemption unless the limit is reached; the write only matches while the count is below the limit it was read with. */
  async countRedemption(programId: string, id: string, redemptionKey: string): Promise<CountOutcome> {
    // The limit read can be changed by a PUT between read and write; a few re-reads settle that.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const current = await this.byId(programId, id);
      if (!current) return 'gone';
      const limit = current.maxRedemptions ?? null;
      if (limit === null || current.timesRedeemed < limit) {
        const condition = {
          maxRedemptions: limit,
          _redemptionKeys: { $ne: redemptionKey },
          ...(limit === null ? {} : { timesRedeemed: { $lt: limit } }),
        };
        if (await this.applyIf(programId, id, condition, { $inc: { timesRedeemed: 1 }, $push: { _redemptionKeys: redemptionKey } }))
          return 'counted';
      }
      if (await this.has(programId, id, { _redemptionKeys: redemptionKey })) return 'counted';
      if (limit !== null && current.timesRedeemed >= limit) return 'limit reached';
    }
    return 'limit reached';
  }

  /** Compensation: takes back exactly the increment this redemption key made, if it made one. */
  async uncountRedemption(programId: string, id: string, redemptionKey: string): Promise<void> {
    await this.applyIf(
      programId,
      id,
      { _redemptionKeys: redemptionKey },
      { $inc: { timesRedeemed: -1 }, $pull: { _redemptionKeys: redemptionKey } },
    );
  }

  /** A released redemption (its sale never came to be) gives its count back. */
  async releaseCount(programId: string, id: string, redemptionKey: string): Promise<void> {
    await this.applyIf(
      programId,
      id,
      { timesRedeemed: { $gt: 0 } },
      { $inc: { timesRedeemed: -1 }, $pull: { _redemptionKeys: redemptionKey } },
    );
  }

  /** Once the redemption is recorded as applied, its key has done its job on the counter. */
  async forgetRedemptionKey(programId: string, id: string, redemptionKey: string): Promise<void> {
    await this.applyIf(programId, id, {}, { $pull: { _redemptionKeys: redemptionKey } });
  }

  /**
   * A change that may set a new limit: it lands only while the count is at most that limit
   * (redemptions race past a value read earlier), and `decide` refuses what it read above it.
   */
  changeWithinLimit(programId: string, id: string, maxRedemptions: number | null | undefined, decide: Decide<Doc>) {
    const guard = typeof maxRedemptions === 'number' ? { timesRedeemed: { $lte: maxRedemptions } } : {};
    return this.changeGuarded(programId, id, guard, decide);
  }
}
