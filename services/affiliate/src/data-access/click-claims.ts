import { byIdInProgram, isDuplicateKey } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * The first counted click of one visitor on one link, for as long as repeats of it are duplicates.
 * `_id` is `<programId>:<linkId>:<identity>`: the claim is a point write on it.
 */
export type ClickClaimDocument = { _id: string; programId: string; clickId: number; expiresAt: Date };

const schema = new Schema<ClickClaimDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    clickId: { type: Number, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);

const clickClaimModel = (connection: Connection): Model<ClickClaimDocument> =>
  connection.model<ClickClaimDocument>('ClickClaim', schema, 'click_claims');

export type ClaimOutcome = { claimed: true } | { claimed: false; clickId: number };

const claimIdOf = (programId: string, linkId: string, identity: string) => `${programId}:${linkId}:${identity}`;

/** Who clicked which link first within the program's deduplication window. */
export class ClickClaimRepository {
  private readonly model: Model<ClickClaimDocument>;

  constructor(context: { connection: Connection }) {
    this.model = clickClaimModel(context.connection);
  }

  /** The click holding the claim at `at`, if any: lets a plain repeat skip allocating a click id. */
  async holder(programId: string, linkId: string, identity: string, at: Date): Promise<number | null> {
    const claim = await byIdInProgram(this.model, programId, claimIdOf(programId, linkId, identity));
    return claim && claim.expiresAt > at ? claim.clickId : null;
  }

  /**
   * Claims the pair for `clickId` until `until`. The upsert's filter matches only an expired claim,
   * so while a live one exists the upsert tries to insert its _id and collides: of any number of
   * simultaneous claims exactly one lands (services/platform/test/database-guarantees.test.ts), and
   * every other caller gets the winner's click id.
   */
  async claim(programId: string, linkId: string, identity: string, clickId: number, at: Date, until: Date): Promise<ClaimOutcome> {
    const _id = claimIdOf(programId, linkId, identity);
    for (;;) {
      try {
        await this.model.collection.updateOne({ _id: _id as never, expiresAt: { $lte: at } }, { $set: { programId, clickId, expiresAt: until } }, { upsert: true });
        return { claimed: true };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const holder = await this.holder(programId, linkId, identity, at);
      // The live claim expired between the collision and this read: try again.
      if (holder !== null) return { claimed: false, clickId: holder };
    }
  }
}
