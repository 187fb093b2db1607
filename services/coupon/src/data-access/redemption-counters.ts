import { AggregateStore, GroupCommit, type Aggregate, type Decide } from '@affiliate/platform';

/** What a redemption counts on: a code or a coupon, each with its own limit. */
export type Counted = Aggregate & { maxRedemptions: number | null; timesRedeemed: number; _redemptionKeys?: string[] };

export type CountOutcome = 'counted' | 'limit reached' | 'gone';

/** One redemption to count on one document; `known` is the document as its request read it a moment ago. */
type ToCount<Doc> = { redemptionKey: string; known?: Doc | null };

/**
 * Redemptions of one code (one coupon) arriving together are counted by one increment: every sale of
 * a busy code writes the same document, so one write per batch instead of one per sale (issue 29).
 * One batch of a document at a time: the next gathers while it is written.
 */
const COUNT_BATCHES = { maxBatch: 256, maxInFlight: 1 };

const documentKey = (programId: string, id: string) => `${programId}\n${id}`;
const partsOf = (key: string): [string, string] => key.split('\n') as [string, string];

/**
 * A store whose documents count redemptions: atomically within the document and never past the
 * limit. The redemption key travels with the increment, so counting the same redemption twice (a
 * retry after a crash) is a no-op that reports success. Counting does not touch the revision: a
 * change of the limit guards its own write with the count instead (changeWithinLimit).
 */
export class CountedStore<Doc extends Counted> extends AggregateStore<Doc> {
  private readonly counting = new GroupCommit<ToCount<Doc>, CountOutcome>(
    (key, items) => this.countBatch(...partsOf(key), items),
    COUNT_BATCHES,
  );

  private readonly forgetting = new GroupCommit<string, void>(
    (key, redemptionKeys) => this.forgetBatch(...partsOf(key), redemptionKeys),
    COUNT_BATCHES,
  );

  /**
   * Adds one redemption unless the limit is reached; the write only matches while the count is below
   * the limit it was read with. `known`: the document as the request read it just before (its checks),
   * used for the first attempt instead of reading it again.
   */
  async countRedemption(programId: string, id: string, redemptionKey: string, known?: Doc | null): Promise<CountOutcome> {
    return this.counting.submit(documentKey(programId, id), { redemptionKey, known });
  }

  /**
   * A batch of redemptions of one document, decided on one fresh read: as many as there is room for
   * (all of them without a limit) are added by one conditional write, guarded as a single one is
   * (the limit read, the count read, none of the keys counted yet); the rest are refused, as a single
   * one is when its read finds the limit reached. When that write does not land (a limit changed, a
   * release, a key counted already by a retry), each is counted alone as before: all or nothing, so
   * the counter stays exact.
   */
  private async countBatch(programId: string, id: string, items: ToCount<Doc>[]): Promise<CountOutcome[]> {
    const keys = items.map((item) => item.redemptionKey);
    if (items.length > 1 && new Set(keys).size === keys.length) {
      const current = await this.byId(programId, id);
      if (!current) return items.map(() => 'gone');
      const limit = current.maxRedemptions ?? null;
      const take = limit === null ? keys.length : Math.max(0, Math.min(keys.length, limit - current.timesRedeemed));
      const taken = keys.slice(0, take);
      const refused = keys.slice(take);
      // A refused key may be one counted already (a retry after a crash): that one is decided alone.
      const noneCountedYet = refused.length === 0 || !(await this.has(programId, id, { _redemptionKeys: { $in: refused } }));
      if (noneCountedYet) {
        if (take === 0) return items.map(() => 'limit reached');
        // With keys refused, the count must be exactly the one read, so that the batch fills the limit.
        const room =
          refused.length > 0 ? { timesRedeemed: current.timesRedeemed } : limit === null ? {} : { timesRedeemed: { $lte: limit - take } };
        const condition = { maxRedemptions: limit, _redemptionKeys: { $nin: taken }, ...room };
        if (await this.applyIf(programId, id, condition, { $inc: { timesRedeemed: take }, $push: { _redemptionKeys: { $each: taken } } }))
          return items.map((_, index) => (index < take ? 'counted' : 'limit reached'));
      }
    }
    const outcomes: CountOutcome[] = [];
    for (const item of items)
      outcomes.push(await this.countOne(programId, id, item.redemptionKey, items.length === 1 ? item.known : undefined));
    return outcomes;
  }

  private async countOne(programId: string, id: string, redemptionKey: string, known: Doc | null | undefined): Promise<CountOutcome> {
    // The limit read can be changed by a PUT between read and write; a few re-reads settle that.
    // What the request read before is only a first guess: a refusal is decided on a fresh read.
    const reads = known ? 6 : 5;
    for (let attempt = 0; attempt < reads; attempt += 1) {
      const fresh = !(attempt === 0 && known);
      const current = fresh ? await this.byId(programId, id) : known;
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
      if (fresh && limit !== null && current.timesRedeemed >= limit) return 'limit reached';
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

  /** Once the redemption is recorded as applied, its key has done its job on the counter (one write per batch of a document). */
  async forgetRedemptionKey(programId: string, id: string, redemptionKey: string): Promise<void> {
    await this.forgetting.submit(documentKey(programId, id), redemptionKey);
  }

  private async forgetBatch(programId: string, id: string, redemptionKeys: string[]): Promise<void[]> {
    await this.applyIf(programId, id, {}, { $pull: { _redemptionKeys: { $in: redemptionKeys } } });
    return redemptionKeys.map(() => undefined);
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
