import { byIdInProgram, GroupCommit, insertOnce, programKey } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/** `pending`: counters being incremented; `applied`: counted, the stored result is replayed for the same key. */
export type RedemptionState = 'pending' | 'applied';

export type RedemptionRecord = {
  /** `<programId>:<redemptionKey>`: the key is unique per program, and a lookup by it is one by _id. */
  _id: string;
  programId: string;
  redemptionKey: string;
  state: RedemptionState;
  promotionalCodeId: string;
  couponId: string;
  affiliateId: string;
  code: string;
  createdAt: Date;
  /** When the current holder claimed the pending redemption; a stale claim is taken over. */
  claimedAt: Date;
};

const redemptionSchema = new Schema<RedemptionRecord>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    redemptionKey: { type: String, required: true },
    state: { type: String, required: true },
    promotionalCodeId: { type: String, required: true },
    couponId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    code: { type: String, required: true },
    createdAt: { type: Date, required: true },
    claimedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'redemptions' },
);

// The sweep for claims left pending by a process that died (pendingAcrossProgramsBefore): only the
// pending ones are in it, so the applied ones (kept for good) cost it nothing.
redemptionSchema.index({ claimedAt: 1 }, { partialFilterExpression: { state: 'pending' } });

const redemptionModel = (connection: Connection): Model<RedemptionRecord> =>
  connection.model<RedemptionRecord>('Redemption', redemptionSchema);

export const redemptionIdOf = (programId: string, redemptionKey: string): string => programKey(programId, redemptionKey);

/** Redemption claims, one per (program, redemption key). */
export class RedemptionRepository {
  private readonly model: Model<RedemptionRecord>;
  /** The redemptions of a program counted meanwhile are marked applied by one write (group commit). */
  private readonly applying = new GroupCommit<RedemptionRecord, void>((programId, claims) => this.markAppliedTogether(programId, claims), {
    maxBatch: 256,
    maxInFlight: 2,
  });

  constructor(context: { connection: Connection }) {
    this.model = redemptionModel(context.connection);
  }

  byKey(programId: string, redemptionKey: string): Promise<RedemptionRecord | null> {
    return byIdInProgram(this.model, programId, redemptionIdOf(programId, redemptionKey));
  }

  /** Inserts the claim; false when the key is claimed already (a racing request). */
  claim(claim: RedemptionRecord): Promise<boolean> {
    return insertOnce(this.model, claim);
  }

  /** Takes a stale pending claim over; false when someone else took or finished it first. */
  async takeOver(claim: RedemptionRecord, claimedAt: Date): Promise<boolean> {
    const taken = await this.model.updateOne(
      { _id: claim._id, programId: claim.programId, state: 'pending', claimedAt: claim.claimedAt },
      { $set: { claimedAt } },
    );
    return taken.modifiedCount === 1;
  }

  async markApplied(claim: RedemptionRecord): Promise<void> {
    await this.applying.submit(claim.programId, claim);
  }

  private async markAppliedTogether(programId: string, claims: RedemptionRecord[]): Promise<void[]> {
    const ids = claims.map((claim) => claim._id);
    await this.model.updateMany({ _id: { $in: ids }, programId, state: 'pending' }, { $set: { state: 'applied' } });
    return claims.map(() => undefined);
  }

  /**
   * Claims still pending that were taken before `before`, across programs (the one read without a
   * program: the sweep serves them all, and each claim names its own): at most `limit`, oldest first.
   */
  pendingAcrossProgramsBefore(before: Date, limit: number): Promise<RedemptionRecord[]> {
    return this.model
      .find({ state: 'pending', claimedAt: { $lt: before } })
      .sort({ claimedAt: 1 })
      .limit(limit)
      .lean<RedemptionRecord[]>();
  }

  async dropPending(claim: RedemptionRecord): Promise<void> {
    await this.model.deleteOne({ _id: claim._id, programId: claim.programId, state: 'pending' });
  }

  /** Drops a pending claim only while it is still held as of `claimedAt` (the sweep's take-over): never one a retry took over since. */
  async dropPendingHeldSince(claim: RedemptionRecord, claimedAt: Date): Promise<void> {
    await this.model.deleteOne({ _id: claim._id, programId: claim.programId, state: 'pending', claimedAt });
  }

  /** Removes an applied redemption and returns it; null when there is none (pending or never made). */
  async removeApplied(programId: string, redemptionKey: string): Promise<RedemptionRecord | null> {
    return this.model.findOneAndDelete({ _id: redemptionIdOf(programId, redemptionKey), programId, state: 'applied' }).lean();
  }
}
