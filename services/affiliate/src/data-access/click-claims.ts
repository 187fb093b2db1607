import { byIdInProgram, insertOnce } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * The first counted click of one visitor on one link, for as long as repeats of it are duplicates.
 * `_id` is `<programId>:<linkId>:<identity>`; `claimKey` is `<_id>@<expiresAt in ms>`, a unique key
 * naming this very claim, so taking over an expired one is a conditional write matched on one
 * unique key (a point operation; a filter of `_id` plus `expiresAt` would scan on the local server).
 */
export type ClickClaimDocument = { _id: string; programId: string; clickId: number; expiresAt: Date; claimKey: string };

const schema = new Schema<ClickClaimDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    clickId: { type: Number, required: true },
    expiresAt: { type: Date, required: true },
    claimKey: { type: String, required: true },
  },
  { versionKey: false },
);
schema.index({ claimKey: 1 }, { unique: true });

const clickClaimModel = (connection: Connection): Model<ClickClaimDocument> =>
  connection.model<ClickClaimDocument>('ClickClaim', schema, 'click_claims');

export type ClaimOutcome = { claimed: true } | { claimed: false; clickId: number };

const claimIdOf = (programId: string, linkId: string, identity: string) => `${programId}:${linkId}:${identity}`;
const claimKeyOf = (claimId: string, expiresAt: Date) => `${claimId}@${expiresAt.getTime()}`;

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
   * Claims the pair for `clickId` until `until`. The first claim is an insert of the `_id`: of any
   * number of simultaneous ones exactly one lands. An expired claim is taken over by a write
   * conditional on its claimKey, which exactly one caller can match (both guarantees in
   * services/platform/test/database-guarantees.test.ts); every other caller gets the winner's id.
   */
  async claim(programId: string, linkId: string, identity: string, clickId: number, at: Date, until: Date): Promise<ClaimOutcome> {
    const _id = claimIdOf(programId, linkId, identity);
    const fresh = { programId, clickId, expiresAt: until, claimKey: claimKeyOf(_id, until) };
    if (await insertOnce(this.model, { _id, ...fresh })) return { claimed: true };
    for (;;) {
      const current = await byIdInProgram(this.model, programId, _id);
      if (current && current.expiresAt > at) return { claimed: false, clickId: current.clickId };
      if (!current) {
        if (await insertOnce(this.model, { _id, ...fresh })) return { claimed: true };
        continue;
      }
      const takeover = await this.model.collection.updateOne({ claimKey: current.claimKey }, { $set: fresh });
      if (takeover.modifiedCount === 1) return { claimed: true };
      // Another click took it over first: read whose it is now.
    }
  }
}
