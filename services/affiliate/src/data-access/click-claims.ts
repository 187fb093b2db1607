import { byIdInProgram, insertEach, insertOnce } from '@affiliate/platform';
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
/** A (link, visitor) pair at the moment of a click. */
export type ClaimPair = { linkId: string; identity: string; at: Date };
export type ClaimRequest = ClaimPair & { clickId: number; until: Date };

const claimIdOf = (programId: string, linkId: string, identity: string) => `${programId}:${linkId}:${identity}`;
const claimKeyOf = (claimId: string, expiresAt: Date) => `${claimId}@${expiresAt.getTime()}`;

/** Who clicked which link first within the program's deduplication window. */
export class ClickClaimRepository {
  private readonly model: Model<ClickClaimDocument>;

  constructor(context: { connection: Connection }) {
    this.model = clickClaimModel(context.connection);
  }

  /**
   * For each pair, the click holding its claim at that pair's `at`, or null: lets a plain repeat skip
   * allocating a click id. One read for all of them (`_id $in`, a point lookup per id).
   */
  async holders(programId: string, pairs: ClaimPair[]): Promise<(number | null)[]> {
    if (pairs.length === 0) return [];
    const ids = pairs.map((pair) => claimIdOf(programId, pair.linkId, pair.identity));
    const found = await this.model.collection.find({ _id: { $in: ids } as never }).toArray();
    const byId = new Map(found.filter((claim) => claim.programId === programId).map((claim) => [String(claim._id), claim]));
    return pairs.map((pair, index) => {
      const claim = byId.get(ids[index] as string);
      return claim && claim.expiresAt > pair.at ? claim.clickId : null;
    });
  }

  /**
   * `claim` for many pairs (distinct ones) at once: one unordered insert of every fresh claim; only
   * the pairs whose insert met an existing claim (a repeat racing in, an expired claim) go through
   * `claim` one by one. Outcomes in order.
   */
  async claimAll(programId: string, claims: ClaimRequest[]): Promise<ClaimOutcome[]> {
    const landed = await insertEach(
      this.model,
      claims.map((claim) => {
        const _id = claimIdOf(programId, claim.linkId, claim.identity);
        return { _id, programId, clickId: claim.clickId, expiresAt: claim.until, claimKey: claimKeyOf(_id, claim.until) };
      }),
    );
    return Promise.all(
      claims.map((claim, index) =>
        landed[index]
          ? ({ claimed: true } as const)
          : this.claim(programId, claim.linkId, claim.identity, claim.clickId, claim.at, claim.until),
      ),
    );
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
