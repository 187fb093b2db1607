import type { Program } from '@affiliate/contracts';
import { ignoringDuplicateKey } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

/** The program settings this service needs, projected from the gateway's program.* events. */
export type ProgramSettings = {
  urlModifier: string;
  destinationUrls: { url: string; params: Record<string, string> }[];
  requireApproval: boolean;
  defaultCommissionRate: number;
};

export type ProgramDocument = ProgramSettings & {
  _id: string;
  /** updatedAt of the program as last applied: an older event arriving late is ignored. */
  sourceUpdatedAt: Date;
  deleted: boolean;
};

export const DEFAULT_PROGRAM_SETTINGS: ProgramSettings = {
  urlModifier: 'ref',
  destinationUrls: [],
  requireApproval: false,
  defaultCommissionRate: 20,
};

const schema = new Schema<ProgramDocument>(
  {
    _id: { type: String, required: true },
    urlModifier: { type: String, required: true },
    destinationUrls: { type: Schema.Types.Mixed, default: [] },
    requireApproval: { type: Boolean, required: true },
    defaultCommissionRate: { type: Number, required: true },
    sourceUpdatedAt: { type: Date, required: true },
    deleted: { type: Boolean, default: false },
  },
  { versionKey: false },
);

const programModel = (connection: Connection): Model<ProgramDocument> => connection.model<ProgramDocument>('Program', schema, 'programs');

/** The settings of each program, projected from the gateway's program.* events (the program is the key). */
export class ProgramSettingsRepository {
  private readonly model: Model<ProgramDocument>;

  constructor(context: { connection: Connection }) {
    this.model = programModel(context.connection);
  }

  async of(programId: string): Promise<ProgramSettings | null> {
    const program = await this.model.findOne({ _id: programId, deleted: false }).lean();
    if (!program) return null;
    const { urlModifier, destinationUrls, requireApproval, defaultCommissionRate } = program;
    return { urlModifier, destinationUrls, requireApproval, defaultCommissionRate };
  }

  /**
   * The write only lands when the program is newer than what is stored; an older one fails the
   * filter, its upsert hits the unique _id, and is dropped.
   */
  async record(program: Program): Promise<void> {
    const updatedAt = new Date(program.updatedAt);
    const { urlModifier, destinationUrls, requireApproval, defaultCommissionRate } = program;
    await ignoringDuplicateKey(
      this.model.updateOne(
        { _id: program.id, sourceUpdatedAt: { $lt: updatedAt } },
        { $set: { urlModifier, destinationUrls, requireApproval, defaultCommissionRate, sourceUpdatedAt: updatedAt, deleted: false } },
        { upsert: true },
      ),
    );
  }

  /** A deleted program stays as a marker dated in the far future, so no late update revives it. */
  async forget(programId: string): Promise<void> {
    await this.model.updateOne(
      { _id: programId },
      { $set: { deleted: true, sourceUpdatedAt: new Date(8.64e15) }, $setOnInsert: { ...DEFAULT_PROGRAM_SETTINGS } },
      { upsert: true },
    );
  }
}
